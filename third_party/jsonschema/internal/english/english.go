// Package english prints the library's messages exactly as the release's
// golang.org/x/text message.Printer for language.English printed them,
// without linking golang.org/x/text: its packages' initialisation (the
// language tables, the plural rules, the default catalog) ran in every
// process that linked the validator, before main (patched; see
// third_party/README.md).
//
// The English printer differs from fmt only in how it prints numbers, so
// this is fmt with those differences put back, for the verbs the messages
// use: an integer printed with a plain %d or %v has its thousands grouped
// ("1,234"), and a float printed with a plain %v is grouped too below a
// million ("1,234.5"), in scientific notation with superscript digits from
// there and below 1e-4 ("1.5×10⁰⁶", "1×10⁻⁰⁵"), and "∞" when infinite.
// Everything else (strings, %q, %T, errors, flags, widths) is fmt's own.
package english

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Sprintf formats a message as the English printer did.
func Sprintf(format string, a ...any) string {
	var b strings.Builder
	argNum := 0
	for i := 0; i < len(format); {
		pct := strings.IndexByte(format[i:], '%')
		if pct < 0 {
			b.WriteString(format[i:])
			break
		}
		b.WriteString(format[i : i+pct])
		i += pct
		// The directive: flags, width and precision, then the verb.
		j := i + 1
		for j < len(format) && strings.IndexByte("+-# 0123456789.", format[j]) >= 0 {
			j++
		}
		if j < len(format) && (format[j] == '*' || format[j] == '[') {
			// Argument indexes and starred widths: no message uses them, and
			// fmt alone can place their arguments.
			return fmt.Sprintf(format, a...)
		}
		if j == len(format) {
			b.WriteString("%!(NOVERB)")
			break
		}
		verb, size := utf8.DecodeRuneInString(format[j:])
		spec := format[i : j+size]
		i = j + size
		switch {
		case verb == '%':
			b.WriteByte('%')
		case argNum >= len(a):
			b.WriteString("%!" + string(verb) + "(MISSING)")
		default:
			arg := a[argNum]
			argNum++
			if s, ok := number(spec, arg); ok {
				b.WriteString(s)
			} else {
				b.WriteString(fmt.Sprintf(spec, arg))
			}
		}
	}
	if argNum < len(a) {
		b.WriteString("%!(EXTRA ")
		for k, arg := range a[argNum:] {
			if k > 0 {
				b.WriteString(", ")
			}
			if arg == nil {
				b.WriteString("<nil>")
				continue
			}
			b.WriteString(reflect.TypeOf(arg).String() + "=")
			if s, ok := number("%v", arg); ok {
				b.WriteString(s)
			} else {
				b.WriteString(fmt.Sprint(arg))
			}
		}
		b.WriteByte(')')
	}
	return b.String()
}

// number formats arg for a plain %d or %v if it is a number the English
// printer wrote in its own way; ok is false for anything fmt prints alike.
// As in fmt, a basic type is printed as what it is, and a type of its own
// first through its Format method, or for %v its Error or String method.
func number(spec string, arg any) (s string, ok bool) {
	if spec != "%d" && spec != "%v" {
		return "", false
	}
	switch v := arg.(type) {
	case int:
		return Int(int64(v)), true
	case int8:
		return Int(int64(v)), true
	case int16:
		return Int(int64(v)), true
	case int32:
		return Int(int64(v)), true
	case int64:
		return Int(v), true
	case uint:
		return Uint(uint64(v)), true
	case uint8:
		return Uint(uint64(v)), true
	case uint16:
		return Uint(uint64(v)), true
	case uint32:
		return Uint(uint64(v)), true
	case uint64:
		return Uint(v), true
	case uintptr:
		return Uint(uint64(v)), true
	case float32:
		if spec == "%v" {
			return Float(float64(v), 32), true
		}
		return "", false
	case float64:
		if spec == "%v" {
			return Float(v, 64), true
		}
		return "", false
	case fmt.Formatter:
		return "", false
	}
	if spec == "%v" {
		switch arg.(type) {
		case error, fmt.Stringer:
			return "", false
		}
	}
	rv := reflect.ValueOf(arg)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return Int(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return Uint(rv.Uint()), true
	case reflect.Float32, reflect.Float64:
		if spec == "%v" {
			return Float(rv.Float(), rv.Type().Bits()), true
		}
	}
	return "", false
}

// Int writes n in decimal with its thousands grouped: "-1,234".
func Int(n int64) string {
	if n < 0 {
		return "-" + group(strconv.FormatUint(-uint64(n), 10))
	}
	return group(strconv.FormatUint(uint64(n), 10))
}

// Uint writes n in decimal with its thousands grouped: "1,234".
func Uint(n uint64) string {
	return group(strconv.FormatUint(n, 10))
}

// Float writes f, a float of bitSize bits, with the fewest digits that
// identify it, as the English printer's %v did: "1,234.5", "0.0001",
// "1.5×10⁰⁶", "1×10⁻⁰⁵", "∞", "NaN". A negative zero is "0".
func Float(f float64, bitSize int) string {
	if math.IsNaN(f) {
		return "NaN"
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	if math.IsInf(f, 1) {
		return sign + "∞"
	}
	// d.ddde±xx: the shortest digits and the exponent of the first one.
	e := strconv.FormatFloat(f, 'e', -1, bitSize)
	mant, expText, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expText)
	digits := strings.Replace(mant, ".", "", 1)
	if f == 0 {
		return "0"
	}
	if exp < -4 || exp >= 6 {
		return sign + mant + "×10" + superscript(exp)
	}
	var whole, frac string
	if exp >= 0 {
		if len(digits) <= exp+1 {
			whole = digits + strings.Repeat("0", exp+1-len(digits))
		} else {
			whole, frac = digits[:exp+1], digits[exp+1:]
		}
	} else {
		whole, frac = "0", strings.Repeat("0", -exp-1)+digits
	}
	s := sign + group(whole)
	if frac != "" {
		s += "." + frac
	}
	return s
}

// superscript writes an exponent in superscript digits, at least two of
// them, with a superscript minus when it is negative: "⁰⁶", "⁻⁰⁵", "³⁰⁰".
func superscript(exp int) string {
	var b strings.Builder
	if exp < 0 {
		b.WriteString("⁻")
		exp = -exp
	}
	digits := strconv.Itoa(exp)
	if len(digits) < 2 {
		digits = "0" + digits
	}
	for _, d := range digits {
		b.WriteString(superDigits[d-'0'])
	}
	return b.String()
}

var superDigits = [10]string{"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"}

// group puts a comma between each group of three digits of an unsigned
// decimal integer, from the right.
func group(digits string) string {
	if len(digits) <= 3 {
		return digits
	}
	var b strings.Builder
	b.Grow(len(digits) + len(digits)/3)
	first := len(digits) % 3
	if first == 0 {
		first = 3
	}
	b.WriteString(digits[:first])
	for i := first; i < len(digits); i += 3 {
		b.WriteByte(',')
		b.WriteString(digits[i : i+3])
	}
	return b.String()
}
