package store

// ProductField is a globally unique product field.
type ProductField string

// Product fields that are global and never reused.
const (
	FieldID        ProductField = "id"
	FieldKeyPrefix ProductField = "key_prefix"
)

// NameUse says whether a product id or key prefix can be chosen.
type NameUse int

// Name uses.
const (
	NameFree       NameUse = iota
	NameTaken              // a product holds it now
	NameUsedBefore         // a product held it once; it is never reused
)
