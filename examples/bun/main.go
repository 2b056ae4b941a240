// Command bun shows github.com/uptrace/bun on the libsql driver: a *sql.DB
// opened with "libsql" and wrapped by bun.NewDB with bun's SQLite dialect
// (sqlitedialect), then inserts, selects with conditions, updates, deletes
// and a transaction (RunInTx) that rolls back.
//
//	go run . -dsn http://127.0.0.1:8080
//	go run . -dsn 'http://127.0.0.1:8080?codec=gojson'
//
// It drops and recreates its own tables (bun_products, bun_sales) on every
// run.
package main

import (
	"context"
	"database/sql"
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
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/sqlitedialect"
)

// Product is a row of bun_products.
type Product struct {
	bun.BaseModel `bun:"table:bun_products,alias:p"`

	ID    int64  `bun:",pk,autoincrement"`
	Name  string `bun:",notnull,unique"`
	Cents int64  `bun:",notnull"`
	Stock int    `bun:",notnull"`
}

// Sale is a row of bun_sales: a quantity of a product sold at a time.
type Sale struct {
	bun.BaseModel `bun:"table:bun_sales,alias:s"`

	ID        int64 `bun:",pk,autoincrement"`
	ProductID int64 `bun:",notnull"`
	Quantity  int   `bun:",notnull"`
	SoldAt    time.Time
}

// ErrOutOfStock is Sell's answer when there is not enough of the product.
var ErrOutOfStock = errors.New("out of stock")

// Open opens a bun database on the libsql driver.
func Open(dsn string) (*bun.DB, error) {
	sqldb, err := sql.Open("libsql", dsn)
	if err != nil {
		return nil, err
	}
	return bun.NewDB(sqldb, sqlitedialect.New()), nil
}

// Reset drops the example's tables and creates them again, empty.
func Reset(ctx context.Context, db *bun.DB) error {
	for _, model := range []any{(*Product)(nil), (*Sale)(nil)} {
		if _, err := db.NewDropTable().Model(model).IfExists().Exec(ctx); err != nil {
			return err
		}
		if _, err := db.NewCreateTable().Model(model).Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

// AddProducts inserts products with one INSERT; bun reads their new IDs
// back (RETURNING) into the slice.
func AddProducts(ctx context.Context, db *bun.DB, products []Product) error {
	_, err := db.NewInsert().Model(&products).Exec(ctx)
	return err
}

// CheaperThan returns the products that cost less than cents, cheapest
// first.
func CheaperThan(ctx context.Context, db *bun.DB, cents int64) ([]Product, error) {
	var products []Product
	err := db.NewSelect().Model(&products).Where("cents < ?", cents).Order("cents").Scan(ctx)
	return products, err
}

// Reprice sets the price of the product called name; it reports whether
// there was one.
func Reprice(ctx context.Context, db *bun.DB, name string, cents int64) (bool, error) {
	res, err := db.NewUpdate().Model((*Product)(nil)).Set("cents = ?", cents).Where("name = ?", name).Exec(ctx)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// DeleteSoldOut deletes the products out of stock and returns how many
// there were.
func DeleteSoldOut(ctx context.Context, db *bun.DB) (int64, error) {
	res, err := db.NewDelete().Model((*Product)(nil)).Where("stock = 0").Exec(ctx)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// Sell records a sale and takes it off the product's stock, in one
// transaction: if the stock is too low, the sale is rolled back too.
func Sell(ctx context.Context, db *bun.DB, productID int64, quantity int) error {
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		sale := Sale{ProductID: productID, Quantity: quantity, SoldAt: time.Now()}
		if _, err := tx.NewInsert().Model(&sale).Exec(ctx); err != nil {
			return err
		}
		res, err := tx.NewUpdate().Model((*Product)(nil)).
			Set("stock = stock - ?", quantity).
			Where("id = ?", productID).Where("stock >= ?", quantity).
			Exec(ctx)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return ErrOutOfStock // RunInTx rolls back
		}
		return nil
	})
}

func main() {
	dsn := flag.String("dsn", os.Getenv("LIBSQL_DSN"), "libsql DSN, e.g. http://127.0.0.1:8080")
	flag.Parse()
	if *dsn == "" {
		log.Fatal("bun: give -dsn or set LIBSQL_DSN")
	}
	if err := run(*dsn, os.Stdout); err != nil {
		log.Fatal("bun: ", err)
	}
}

// run is the whole example; it writes what it finds to w.
func run(dsn string, w io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	db, err := Open(dsn)
	if err != nil {
		return err
	}
	defer db.Close()

	if err := Reset(ctx, db); err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	products := []Product{
		{Name: "pencil", Cents: 120, Stock: 40},
		{Name: "notebook", Cents: 450, Stock: 3},
		{Name: "fountain pen", Cents: 2900, Stock: 0},
	}
	if err := AddProducts(ctx, db, products); err != nil {
		return fmt.Errorf("insert: %w", err)
	}
	if _, err := Reprice(ctx, db, "notebook", 399); err != nil {
		return err
	}
	cheap, err := CheaperThan(ctx, db, 1000)
	if err != nil {
		return err
	}
	for _, p := range cheap {
		fmt.Fprintf(w, "under 10.00: %s at %d.%02d, %d in stock\n", p.Name, p.Cents/100, p.Cents%100, p.Stock)
	}

	notebook := cheap[1]
	fmt.Fprintf(w, "sell 2 notebooks: %v\n", Sell(ctx, db, notebook.ID, 2))
	fmt.Fprintf(w, "sell 2 more: %v\n", Sell(ctx, db, notebook.ID, 2))

	n, err := DeleteSoldOut(ctx, db)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "deleted %d sold-out product(s)\n", n)
	return nil
}
