package record

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// Finite replaces every NaN and ±Inf float reachable from ptr (a pointer to
// a value about to be written) with 0, and returns one description per
// value replaced: its JSON path under root and what it was. JSON has no
// spelling for those values, so a single one makes the whole file
// unencodable; a score or multiplier that overflowed is worth less than the
// record it would cost.
func Finite(ptr any, root string) []string {
	v := reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return nil
	}
	var out []string
	finiteWalk(v.Elem(), "", &out, 0)
	for i := range out {
		out[i] = root + ": " + out[i]
	}
	return out
}

// finiteMaxDepth stops the walk on a structure nested deeper than any
// state file is.
const finiteMaxDepth = 64

func finiteWalk(v reflect.Value, path string, out *[]string, depth int) {
	if depth > finiteMaxDepth {
		return
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); (math.IsNaN(f) || math.IsInf(f, 0)) && v.CanSet() {
			*out = append(*out, fmt.Sprintf("%s was %v", orTop(path), f))
			v.SetFloat(0)
		}
	case reflect.Pointer:
		if !v.IsNil() {
			finiteWalk(v.Elem(), path, out, depth+1)
		}
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		// An interface's dynamic value is not addressable: walk a copy and
		// put it back when something changed.
		cp := reflect.New(v.Elem().Type()).Elem()
		cp.Set(v.Elem())
		n := len(*out)
		finiteWalk(cp, path, out, depth+1)
		if len(*out) > n && v.CanSet() {
			v.Set(cp)
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			name := sf.Name
			if tag, _, _ := strings.Cut(sf.Tag.Get("json"), ","); tag == "-" {
				continue
			} else if tag != "" {
				name = tag
			}
			// An embedded struct's fields are its parent's in JSON.
			p := path
			if !sf.Anonymous {
				p = joinPath(path, name)
			}
			finiteWalk(v.Field(i), p, out, depth+1)
		}
	case reflect.Slice, reflect.Array:
		// Raw JSON bytes hold no float to fix.
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := 0; i < v.Len(); i++ {
			finiteWalk(v.Index(i), path+"["+strconv.Itoa(i)+"]", out, depth+1)
		}
	case reflect.Map:
		if v.IsNil() || !finiteMayHold(v.Type().Elem(), 0) {
			return
		}
		iter := v.MapRange()
		for iter.Next() {
			// Map values are not addressable either.
			cp := reflect.New(v.Type().Elem()).Elem()
			cp.Set(iter.Value())
			n := len(*out)
			finiteWalk(cp, joinPath(path, fmt.Sprint(iter.Key().Interface())), out, depth+1)
			if len(*out) > n {
				v.SetMapIndex(iter.Key(), cp)
			}
		}
	}
}

// finiteMayHold reports whether a value of type t can contain a float, so
// maps of strings or ints are not copied entry by entry for nothing.
func finiteMayHold(t reflect.Type, depth int) bool {
	if depth > 8 {
		return true
	}
	switch t.Kind() {
	case reflect.Float32, reflect.Float64, reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		if t.Kind() != reflect.Map && t.Elem().Kind() == reflect.Uint8 {
			return false
		}
		return finiteMayHold(t.Elem(), depth+1)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if t.Field(i).IsExported() && finiteMayHold(t.Field(i).Type, depth+1) {
				return true
			}
		}
	}
	return false
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// orTop names the value itself when it has no path of its own.
func orTop(path string) string {
	if path == "" {
		return "(top level)"
	}
	return path
}
