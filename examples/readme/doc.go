// Package readme holds the test that every Go snippet in the repository's
// README.md, examples/README.md, docs/*.md and docs/dev/*.md compiles, and
// the one that every relative link of its Markdown files resolves
// (readme_test.go). It is a module of its own so that the tools the
// snippets use (GORM, sqlx, goose, golang-migrate, bun) stay out of the
// driver's go.mod; tools.go lists them for go mod tidy.
package readme
