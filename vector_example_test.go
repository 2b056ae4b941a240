package libsql_test

import (
	"errors"
	"fmt"

	"github.com/gohrana/libsql"
)

// A Vector32 is an argument as the blob vector32() makes, and scans from
// such a blob or from vector_extract's text.
func ExampleVector32() {
	blob, _ := libsql.Vector32{1, 2, 3}.Value() // as vector32('[1,2,3]')
	fmt.Printf("%X\n", blob)

	var v libsql.Vector32
	if err := v.Scan(blob); err != nil {
		fmt.Println(err)
	}
	fmt.Println(v)
	if err := v.Scan("[0.5,-1,2,1e+10]"); err != nil { // vector_extract's text
		fmt.Println(err)
	}
	fmt.Println(v)
	// Output:
	// 0000803F0000004000004040
	// [1 2 3]
	// [0.5 -1 2 1e+10]
}

// A FLOAT64 vector does not scan into a Vector32, whose elements could not
// hold its own; the *VectorError says which type the blob is.
func ExampleVectorError() {
	blob, _ := libsql.Vector64{0.1, 0.2}.Value() // as vector64('[0.1,0.2]')

	var v libsql.Vector32
	err := v.Scan(blob)
	var verr *libsql.VectorError
	if errors.As(err, &verr) {
		fmt.Println("type", verr.Type)
	}
	fmt.Println(err)

	var w libsql.Vector64
	if err := w.Scan(blob); err != nil {
		fmt.Println(err)
	}
	fmt.Println(w)
	// Output:
	// type float64
	// libsql: a vector of type 2 (float64) cannot scan into Vector32 without rounding; scan it into a Vector64
	// [0.1 0.2]
}
