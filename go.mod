module github.com/mooncake-go/mooncake-go

go 1.26.0

require (
	github.com/ianlancetaylor/cgosymbolizer v0.0.0-20260504013507-f4b012c11129
	github.com/stretchr/testify v1.12.1
	golang.org/x/sys v0.50.0
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
