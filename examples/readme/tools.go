//go:build tools

// The packages the Markdown files' snippets import (README.md,
// examples/README.md, docs/*.md, docs/dev/*.md), so that go.mod and go.sum provide them
// to the module the test builds the snippets in. The build tag keeps them
// out of every build.

package readme

import (
	_ "github.com/gohrana/libsql"
	_ "github.com/gohrana/libsql/codec/gojson"
	_ "github.com/gohrana/libsql/embedded"
	_ "github.com/gohrana/libsql/otel"
	_ "github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/sqlite"
	_ "github.com/golang-migrate/migrate/v4/source/iofs"
	_ "github.com/jmoiron/sqlx"
	_ "github.com/pressly/goose/v3"
	_ "github.com/uptrace/bun"
	_ "github.com/uptrace/bun/dialect/sqlitedialect"
	_ "go.opentelemetry.io/otel/trace"
	_ "gorm.io/driver/sqlite"
	_ "gorm.io/gorm"
)
