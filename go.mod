module github.com/mooncake-go/mooncake-go

go 1.26
