module github.com/gohrana/libsql

go 1.26
