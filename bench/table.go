package bench

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// WriteTable writes rows as a Markdown table, the first row as its header;
// columns whose cells (below the header) are all numbers (or "-") align
// right.
func WriteTable(w io.Writer, rows [][]string) {
	width := make([]int, len(rows[0]))
	numeric := make([]bool, len(rows[0]))
	for c := range numeric {
		numeric[c] = true
	}
	for r, row := range rows {
		for c, cell := range row {
			width[c] = max(width[c], utf8.RuneCountInString(cell))
			if r > 0 && cell != "-" && !isNumber(cell) {
				numeric[c] = false
			}
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		b.WriteString("|")
		for c, cell := range cells {
			pad := strings.Repeat(" ", width[c]-utf8.RuneCountInString(cell))
			if numeric[c] {
				b.WriteString(" " + pad + cell + " |")
			} else {
				b.WriteString(" " + cell + pad + " |")
			}
		}
		fmt.Fprintln(w, b.String())
	}
	line(rows[0])
	sep := make([]string, len(width))
	for c, wd := range width {
		sep[c] = strings.Repeat("-", wd)
		if numeric[c] {
			sep[c] = strings.Repeat("-", wd-1) + ":"
		}
	}
	line(sep)
	for _, row := range rows[1:] {
		line(row)
	}
}

// isNumber reports whether s is a number, possibly with a trailing % or ×.
func isNumber(s string) bool {
	s = strings.TrimSuffix(strings.TrimSuffix(s, "%"), "×")
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}
