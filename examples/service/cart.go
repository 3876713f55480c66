package main

// Item is one line of a cart: a product, its unit price and how many.
type Item struct {
	Name       string `json:"name"`
	PriceCents int    `json:"price_cents"`
	Qty        int    `json:"qty"`
}

// Total is what the cart costs, in cents.
func Total(items []Item) int {
	total := 0
	for _, it := range items {
		total += it.PriceCents * it.Qty
	}
	return total
}
