package main

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gohrana/libsql/internal/exampletest"
	"github.com/uptrace/bun"
)

// forEachVariantDB runs f once per transport and codec
// (exampletest.ForEachDB), with the database opened and the products
// inserted into fresh tables, with their IDs set.
func forEachVariantDB(t *testing.T, f func(t *testing.T, ctx context.Context, db *bun.DB, products []Product)) {
	t.Helper()
	var products []Product // the subtest's own: AddProducts sets their IDs
	exampletest.ForEachDB(t, Open, func(t *testing.T, ctx context.Context, db *bun.DB) {
		f(t, ctx, db, products)
	}, Reset, func(ctx context.Context, db *bun.DB) error {
		products = []Product{
			{Name: "pencil", Cents: 120, Stock: 40},
			{Name: "notebook", Cents: 450, Stock: 3},
			{Name: "fountain pen", Cents: 2900, Stock: 0},
		}
		return AddProducts(ctx, db, products)
	})
}

// TestRun runs the command's code and checks all it prints.
func TestRun(t *testing.T) {
	const want = `under 10.00: pencil at 1.20, 40 in stock
under 10.00: notebook at 3.99, 3 in stock
sell 2 notebooks: <nil>
sell 2 more: out of stock
deleted 1 sold-out product(s)
`
	exampletest.CheckRun(t, want, run)
}

// TestInsert checks the IDs bun read back from the INSERT and the rows.
func TestInsert(t *testing.T) {
	forEachVariantDB(t, func(t *testing.T, ctx context.Context, db *bun.DB, products []Product) {
		for i, p := range products {
			if p.ID != int64(i+1) {
				t.Errorf("%s: ID %d after insert, want %d", p.Name, p.ID, i+1)
			}
			var got Product
			if err := db.NewSelect().Model(&got).Where("id = ?", p.ID).Scan(ctx); err != nil {
				t.Fatal(err)
			}
			if got != p {
				t.Errorf("row %d = %+v, want %+v", p.ID, got, p)
			}
		}
	})
}

// TestSelectWhere runs CheaperThan with thresholds below, among and above
// the prices.
func TestSelectWhere(t *testing.T) {
	forEachVariantDB(t, func(t *testing.T, ctx context.Context, db *bun.DB, _ []Product) {
		tests := []struct {
			cents int64
			want  []string
		}{
			{100, nil},
			{1000, []string{"pencil", "notebook"}},
			{3000, []string{"pencil", "notebook", "fountain pen"}},
		}
		for _, tt := range tests {
			got, err := CheaperThan(ctx, db, tt.cents)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range got {
				names = append(names, p.Name)
			}
			if !slices.Equal(names, tt.want) {
				t.Errorf("CheaperThan(%d) = %q, want %q", tt.cents, names, tt.want)
			}
		}
	})
}

// TestUpdateDelete reprices a product (and one that does not exist), then
// deletes the sold-out one.
func TestUpdateDelete(t *testing.T) {
	forEachVariantDB(t, func(t *testing.T, ctx context.Context, db *bun.DB, _ []Product) {
		if ok, err := Reprice(ctx, db, "pencil", 99); err != nil || !ok {
			t.Fatalf("Reprice(pencil) = %v, %v; want true, nil", ok, err)
		}
		if ok, err := Reprice(ctx, db, "eraser", 50); err != nil || ok {
			t.Fatalf("Reprice(eraser) = %v, %v; want false, nil", ok, err)
		}
		var cents int64
		if err := db.NewSelect().Model((*Product)(nil)).Column("cents").Where("name = ?", "pencil").Scan(ctx, &cents); err != nil {
			t.Fatal(err)
		}
		if cents != 99 {
			t.Errorf("pencil costs %d cents after Reprice, want 99", cents)
		}

		if n, err := DeleteSoldOut(ctx, db); err != nil || n != 1 {
			t.Fatalf("DeleteSoldOut = %d, %v; want 1, nil", n, err)
		}
		exists, err := db.NewSelect().Model((*Product)(nil)).Where("name = ?", "fountain pen").Exists(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if exists {
			t.Error("the sold-out product is still there")
		}
		if n, err := db.NewSelect().Model((*Product)(nil)).Count(ctx); err != nil || n != 2 {
			t.Errorf("%d products left (%v), want 2", n, err)
		}
	})
}

// TestRunInTx sells until the stock runs out: the sale that finds too
// little stock is rolled back with its inserted row.
func TestRunInTx(t *testing.T) {
	forEachVariantDB(t, func(t *testing.T, ctx context.Context, db *bun.DB, products []Product) {
		notebook := products[1] // 3 in stock
		start := time.Now().Add(-time.Minute)
		steps := []struct {
			quantity int
			wantErr  error
			stock    int // after
			sales    int // after
		}{
			{2, nil, 1, 1},
			{2, ErrOutOfStock, 1, 1}, // the sale was inserted, then rolled back
			{1, nil, 0, 2},
		}
		for _, step := range steps {
			if err := Sell(ctx, db, notebook.ID, step.quantity); !errors.Is(err, step.wantErr) {
				t.Errorf("Sell(%d): error %v, want %v", step.quantity, err, step.wantErr)
			}
			var p Product
			if err := db.NewSelect().Model(&p).Where("id = ?", notebook.ID).Scan(ctx); err != nil {
				t.Fatal(err)
			}
			var sales []Sale
			if err := db.NewSelect().Model(&sales).Order("id").Scan(ctx); err != nil {
				t.Fatal(err)
			}
			if p.Stock != step.stock || len(sales) != step.sales {
				t.Errorf("after Sell(%d): stock %d, %d sales; want %d, %d", step.quantity, p.Stock, len(sales), step.stock, step.sales)
			}
			for _, s := range sales {
				if s.ProductID != notebook.ID || s.SoldAt.Before(start) || s.SoldAt.After(time.Now()) {
					t.Errorf("sale %+v: want product %d, sold at about now", s, notebook.ID)
				}
			}
		}
	})
}
