package main

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gohrana/libsql/internal/exampletest"
	"gorm.io/gorm"
)

// forEachVariantDB runs f once per transport and codec
// (exampletest.ForEachDSN), with the database opened and its tables
// freshly created.
func forEachVariantDB(t *testing.T, f func(t *testing.T, db *gorm.DB)) {
	t.Helper()
	exampletest.ForEachDSN(t, func(t *testing.T, dsn string) {
		db, err := Open(dsn)
		if err != nil {
			t.Fatal(err)
		}
		sqlDB, err := db.DB()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sqlDB.Close() })
		if err := Reset(db); err != nil {
			t.Fatal("reset: ", err)
		}
		f(t, db)
	})
}

// TestRun runs the command's code and checks all it prints.
func TestRun(t *testing.T) {
	const want = `second Stanisław Lem: duplicated key: true
rolled back: book "Untitled": a book needs pages
Stanisław Lem
  His Master's Voice (199 pages)
  Solaris (204 pages)
Ursula K. Le Guin
  A Wizard of Earthsea (183 pages)
  The Left Hand of Darkness (304 pages)
`
	exampletest.CheckRun(t, want, run)
}

// TestAutoMigrate checks what AutoMigrate made of the models: both tables,
// the unique index and the foreign key, and that a second run is a no-op.
func TestAutoMigrate(t *testing.T) {
	forEachVariantDB(t, func(t *testing.T, db *gorm.DB) {
		m := db.Migrator()
		for _, model := range []any{&Author{}, &Book{}} {
			if !m.HasTable(model) {
				t.Errorf("no table for %T", model)
			}
		}
		if !m.HasIndex(&Author{}, "Name") {
			t.Error("no unique index on gorm_authors.name")
		}
		if !m.HasConstraint(&Author{}, "Books") {
			t.Error("no foreign key from gorm_books to gorm_authors")
		}
		// AutoMigrate on tables that are already up to date changes nothing.
		if err := db.AutoMigrate(&Author{}, &Book{}); err != nil {
			t.Fatal("second AutoMigrate: ", err)
		}
	})
}

// TestPreload reads the seeded authors back with their books, in order,
// each book pointing at its author, with the creation time set.
func TestPreload(t *testing.T) {
	forEachVariantDB(t, func(t *testing.T, db *gorm.DB) {
		before := time.Now().Add(-time.Minute)
		if err := Seed(db); err != nil {
			t.Fatal(err)
		}
		authors, err := AuthorsWithBooks(db)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string][]string{
			"Stanisław Lem":     {"Solaris"},
			"Ursula K. Le Guin": {"A Wizard of Earthsea", "The Left Hand of Darkness"},
		}
		if len(authors) != len(want) || authors[0].Name != "Stanisław Lem" {
			t.Fatalf("authors = %+v, want Lem then Le Guin", authors)
		}
		for _, a := range authors {
			var titles []string
			for _, b := range a.Books {
				if b.AuthorID != a.ID {
					t.Errorf("%q: author_id %d, want %d", b.Title, b.AuthorID, a.ID)
				}
				titles = append(titles, b.Title)
			}
			if !slices.Equal(titles, want[a.Name]) {
				t.Errorf("%s: books %q, want %q", a.Name, titles, want[a.Name])
			}
			if a.CreatedAt.Before(before) || a.CreatedAt.After(time.Now().Add(time.Minute)) {
				t.Errorf("%s: created_at %v, want about now", a.Name, a.CreatedAt)
			}
		}
	})
}

// TestTransaction commits one AddBooks and rolls another back after its
// first insert, and checks what reached the table.
func TestTransaction(t *testing.T) {
	forEachVariantDB(t, func(t *testing.T, db *gorm.DB) {
		if err := Seed(db); err != nil {
			t.Fatal(err)
		}
		var lem Author
		if err := db.Where("name = ?", "Stanisław Lem").First(&lem).Error; err != nil {
			t.Fatal(err)
		}
		countBooks := func() int64 {
			t.Helper()
			var n int64
			if err := db.Model(&Book{}).Where("author_id = ?", lem.ID).Count(&n).Error; err != nil {
				t.Fatal(err)
			}
			return n
		}

		tests := []struct {
			name    string
			books   []Book
			wantErr error
			added   int64
		}{
			{"commit", []Book{{Title: "The Cyberiad", Pages: 295}, {Title: "Fiasco", Pages: 322}}, nil, 2},
			// The first book was inserted before the second was
			// rejected; the rollback takes it away again.
			{"rollback", []Book{{Title: "Eden", Pages: 262}, {Title: "Untitled"}}, ErrNoPages, 0},
		}
		for _, tt := range tests {
			before := countBooks()
			err := AddBooks(db, lem.ID, tt.books)
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("%s: AddBooks error %v, want %v", tt.name, err, tt.wantErr)
			}
			if got := countBooks() - before; got != tt.added {
				t.Errorf("%s: %d books added, want %d", tt.name, got, tt.added)
			}
		}
		var eden int64
		if err := db.Model(&Book{}).Where("title = ?", "Eden").Count(&eden).Error; err != nil {
			t.Fatal(err)
		}
		if eden != 0 {
			t.Error("the rolled-back book is in the table")
		}
	})
}

// authorVarchar is Author with its name declared varchar(200) (GORM's
// SQLite dialector makes every string column text): the model AlterColumn
// brings gorm_authors to.
type authorVarchar struct {
	ID        uint
	Name      string `gorm:"type:varchar(200);not null;uniqueIndex"`
	Books     []Book `gorm:"foreignKey:AuthorID"`
	CreatedAt time.Time
}

func (authorVarchar) TableName() string { return "gorm_authors" }

// TestAlterColumn alters a column of gorm_authors, which gorm_books
// references. SQLite cannot change a column in place, so GORM rebuilds the
// table (create a copy, copy the rows, drop the original, rename the copy)
// with foreign keys turned off around it; the rows and the references to
// them must come through unchanged.
func TestAlterColumn(t *testing.T) {
	forEachVariantDB(t, func(t *testing.T, db *gorm.DB) {
		if err := Seed(db); err != nil {
			t.Fatal(err)
		}
		before, err := AuthorsWithBooks(db)
		if err != nil {
			t.Fatal(err)
		}

		if err := db.Migrator().AlterColumn(&authorVarchar{}, "Name"); err != nil {
			t.Fatal("AlterColumn: ", err)
		}

		types, err := db.Migrator().ColumnTypes(&authorVarchar{})
		if err != nil {
			t.Fatal(err)
		}
		for _, ct := range types {
			if typ, _ := ct.ColumnType(); ct.Name() == "name" && typ != "varchar(200)" {
				t.Errorf("name: type %q after AlterColumn, want varchar(200)", typ)
			}
		}
		after, err := AuthorsWithBooks(db)
		if err != nil {
			t.Fatal(err)
		}
		if len(after) != len(before) {
			t.Fatalf("%d authors after AlterColumn, want %d", len(after), len(before))
		}
		for i := range after {
			if after[i].ID != before[i].ID || after[i].Name != before[i].Name || len(after[i].Books) != len(before[i].Books) {
				t.Errorf("author %d: %+v after AlterColumn, want %+v", i, after[i], before[i])
			}
		}

		var violations []map[string]any
		if err := db.Raw("PRAGMA foreign_key_check").Scan(&violations).Error; err != nil {
			t.Fatal(err)
		}
		if len(violations) > 0 {
			t.Errorf("foreign_key_check: %v", violations)
		}
		// GORM turns foreign keys back on afterwards.
		var fk int
		if err := db.Raw("PRAGMA foreign_keys").Scan(&fk).Error; err != nil {
			t.Fatal(err)
		}
		if fk != 1 {
			t.Errorf("PRAGMA foreign_keys = %d after AlterColumn, want 1", fk)
		}
	})
}

// TestTranslateError checks that with gorm.Config.TranslateError, the
// driver's constraint errors become GORM's own.
func TestTranslateError(t *testing.T) {
	forEachVariantDB(t, func(t *testing.T, db *gorm.DB) {
		if err := Seed(db); err != nil {
			t.Fatal(err)
		}
		// sqld enforces foreign keys by default.
		var fk int
		if err := db.Raw("PRAGMA foreign_keys").Scan(&fk).Error; err != nil {
			t.Fatal(err)
		}
		if fk != 1 {
			t.Fatalf("PRAGMA foreign_keys = %d, want 1", fk)
		}

		tests := []struct {
			name   string
			create any
			want   error
		}{
			{"unique", &Author{Name: "Stanisław Lem"}, gorm.ErrDuplicatedKey},
			{"foreign key", &Book{Title: "Orphan", Pages: 1, AuthorID: 9999}, gorm.ErrForeignKeyViolated},
		}
		for _, tt := range tests {
			if err := db.Create(tt.create).Error; !errors.Is(err, tt.want) {
				t.Errorf("%s: error %v, want %v", tt.name, err, tt.want)
			}
		}
	})
}
