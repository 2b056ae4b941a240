// Command gorm shows GORM on the libsql driver through GORM's SQLite
// dialector (gorm.io/driver/sqlite), as Turso's documentation does: the
// dialector is given the driver name "libsql" and a libsql DSN, and
// everything else is plain GORM: AutoMigrate, a has-many association read
// back with Preload, a transaction that rolls back, and constraint errors
// as GORM's own (TranslateError). Its tests also change a column of a table
// that other rows reference, with Migrator().AlterColumn.
//
//	go run . -dsn http://127.0.0.1:8080
//	go run . -dsn 'http://127.0.0.1:8080?codec=gojson'
//
// It drops and recreates its own tables (gorm_authors, gorm_books) on every
// run.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	_ "github.com/gohrana/libsql" // registers the "libsql" driver
	// Makes codec=gojson available in the DSN; without it only the default
	// codec=direct is.
	_ "github.com/gohrana/libsql/codec/gojson"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
	"gorm.io/gorm/schema"
)

// Author has many books.
type Author struct {
	ID        uint
	Name      string `gorm:"size:100;not null;uniqueIndex"`
	Books     []Book
	CreatedAt time.Time
}

// Book belongs to an author: AutoMigrate gives author_id a foreign key to
// gorm_authors(id).
type Book struct {
	ID       uint
	Title    string `gorm:"not null"`
	Pages    int
	AuthorID uint
}

// ErrNoPages rejects a book without pages in AddBooks.
var ErrNoPages = errors.New("a book needs pages")

// Open opens a GORM database on the libsql driver. The table names get the
// prefix "gorm_", so that the example's tables stand apart from others in
// the same database.
func Open(dsn string) (*gorm.DB, error) {
	return gorm.Open(sqlite.New(sqlite.Config{DriverName: "libsql", DSN: dsn}), &gorm.Config{
		NamingStrategy: schema.NamingStrategy{TablePrefix: "gorm_"},
		// Constraint errors become gorm.ErrDuplicatedKey and
		// gorm.ErrForeignKeyViolated.
		TranslateError: true,
		Logger:         logger.Default.LogMode(logger.Silent),
	})
}

// Reset drops the example's tables and creates them again from the models.
// It drops the books before the authors they reference, as sqld enforces
// foreign keys.
func Reset(db *gorm.DB) error {
	for _, model := range []any{&Book{}, &Author{}} {
		if err := db.Migrator().DropTable(model); err != nil {
			return err
		}
	}
	return db.AutoMigrate(&Author{}, &Book{})
}

// Seed creates two authors; GORM inserts their books with them, in one
// transaction.
func Seed(db *gorm.DB) error {
	authors := []Author{
		{Name: "Ursula K. Le Guin", Books: []Book{
			{Title: "The Left Hand of Darkness", Pages: 304},
			{Title: "A Wizard of Earthsea", Pages: 183},
		}},
		{Name: "Stanisław Lem", Books: []Book{{Title: "Solaris", Pages: 204}}},
	}
	return db.Create(&authors).Error
}

// AuthorsWithBooks returns every author by name, each with its books by title.
func AuthorsWithBooks(db *gorm.DB) ([]Author, error) {
	var authors []Author
	err := db.Preload("Books", func(db *gorm.DB) *gorm.DB { return db.Order("title") }).
		Order("name").Find(&authors).Error
	return authors, err
}

// AddBooks gives an author new books in one transaction: all of them are
// saved, or none if one of them is rejected.
func AddBooks(db *gorm.DB, authorID uint, books []Book) error {
	return db.Transaction(func(tx *gorm.DB) error {
		for i := range books {
			if books[i].Pages <= 0 {
				return fmt.Errorf("book %q: %w", books[i].Title, ErrNoPages)
			}
			books[i].AuthorID = authorID
			if err := tx.Create(&books[i]).Error; err != nil {
				return err
			}
		}
		return nil
	})
}

func main() {
	dsn := flag.String("dsn", os.Getenv("LIBSQL_DSN"), "libsql DSN, e.g. http://127.0.0.1:8080")
	flag.Parse()
	if *dsn == "" {
		log.Fatal("gorm: give -dsn or set LIBSQL_DSN")
	}
	if err := run(*dsn, os.Stdout); err != nil {
		log.Fatal("gorm: ", err)
	}
}

// run is the whole example; it writes what it finds to w.
func run(dsn string, w io.Writer) error {
	db, err := Open(dsn)
	if err != nil {
		return err
	}
	sqlDB, err := db.DB()
	if err != nil {
		return err
	}
	defer sqlDB.Close()

	if err := Reset(db); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := Seed(db); err != nil {
		return fmt.Errorf("seed: %w", err)
	}

	var lem Author
	if err := db.Where("name = ?", "Stanisław Lem").First(&lem).Error; err != nil {
		return err
	}
	// With TranslateError, a unique violation is gorm.ErrDuplicatedKey.
	err = db.Create(&Author{Name: "Stanisław Lem"}).Error
	fmt.Fprintf(w, "second Stanisław Lem: duplicated key: %v\n", errors.Is(err, gorm.ErrDuplicatedKey))

	// The second book has no pages: the transaction rolls back, and the
	// first one is not saved either.
	err = AddBooks(db, lem.ID, []Book{{Title: "The Cyberiad", Pages: 295}, {Title: "Untitled"}})
	fmt.Fprintf(w, "rolled back: %v\n", err)
	if err := AddBooks(db, lem.ID, []Book{{Title: "His Master's Voice", Pages: 199}}); err != nil {
		return err
	}

	authors, err := AuthorsWithBooks(db)
	if err != nil {
		return err
	}
	for _, a := range authors {
		fmt.Fprintf(w, "%s\n", a.Name)
		for _, b := range a.Books {
			fmt.Fprintf(w, "  %s (%d pages)\n", b.Title, b.Pages)
		}
	}
	return nil
}
