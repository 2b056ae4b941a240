package sqlscan_test

import (
	"fmt"

	"github.com/gohrana/libsql/sqlscan"
)

func ExampleScanner() {
	sql := "SELECT :a -- note\n;"
	s := sqlscan.NewScanner(sql)
	for t := s.Next(); t.Kind != sqlscan.EOF; t = s.Next() {
		fmt.Printf("%v %q\n", t.Kind, sql[t.Start:t.End])
	}
	// Output:
	// Word "SELECT"
	// Space " "
	// Param ":a"
	// Space " "
	// Comment "-- note"
	// Space "\n"
	// Semicolon ";"
}

func ExampleScanParams() {
	p := sqlscan.ScanParams("SELECT ?2, :name, ?, :name; -- done")
	fmt.Printf("%q named=%v numeric=%v multi=%v\n", p.Names, p.Named, p.Numeric, p.Multi)
	// Output: ["" "?2" ":name" ""] named=true numeric=true multi=false
}

func ExampleTxControl() {
	fmt.Println(sqlscan.TxControl("/* note */ BEGIN IMMEDIATE"), sqlscan.TxControl("RELEASE SAVEPOINT sp;"), sqlscan.TxControl("SELECT 1"))
	// Output: TxBegin TxRelease NotTx
}
