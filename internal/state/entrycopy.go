package state

import (
	"reflect"
	"sync"
)

// copyDeep is a copy of v that shares nothing the program could change
// in place with v: every pointer, list and map it holds, at any depth,
// is a new one holding copies (a nil one stays nil, an empty one empty).
// An entry's record of the bytes it was read from (*readEntry) is shared:
// it never changes once made. ok is false for a value holding anything
// it cannot copy so: a function, a channel, an unsafe pointer, or a
// pointer, list, map or interface in an unexported field (which it
// cannot set); the caller then keeps no copy.
func copyDeep(v reflect.Value) (reflect.Value, bool) {
	switch v.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.String:
		return v, true
	case reflect.Pointer:
		if v.IsNil() || v.Type() == readEntryType {
			return v, true
		}
		e, ok := copyDeep(v.Elem())
		if !ok {
			return reflect.Value{}, false
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(e)
		return p, true
	case reflect.Interface:
		if v.IsNil() {
			return v, true
		}
		e, ok := copyDeep(v.Elem())
		if !ok {
			return reflect.Value{}, false
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(e)
		return out, true
	case reflect.Slice:
		if v.IsNil() {
			return v, true
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		if k := v.Type().Elem().Kind(); k == reflect.Uint8 || k == reflect.String || k == reflect.Bool ||
			(k >= reflect.Int && k <= reflect.Float64) {
			reflect.Copy(out, v)
			return out, true
		}
		if !copyElems(out, v) {
			return reflect.Value{}, false
		}
		return out, true
	case reflect.Array:
		out := reflect.New(v.Type()).Elem()
		if !copyElems(out, v) {
			return reflect.Value{}, false
		}
		return out, true
	case reflect.Map:
		if v.IsNil() {
			return v, true
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			k, ok := copyDeep(it.Key())
			if !ok {
				return reflect.Value{}, false
			}
			e, ok := copyDeep(it.Value())
			if !ok {
				return reflect.Value{}, false
			}
			out.SetMapIndex(k, e)
		}
		return out, true
	case reflect.Struct:
		fields, ok := structCopyPlan(v.Type())
		if !ok {
			return reflect.Value{}, false
		}
		out := reflect.New(v.Type()).Elem()
		// Every field, unexported ones included, as it is; then each one
		// that can hold a reference is replaced by its copy.
		out.Set(v)
		for _, i := range fields {
			e, ok := copyDeep(v.Field(i))
			if !ok {
				return reflect.Value{}, false
			}
			out.Field(i).Set(e)
		}
		return out, true
	}
	return reflect.Value{}, false
}

// holdsReference says whether a value of type t can share something the
// program could change in place (a pointer, list, map, interface, or a
// struct or array holding one).
func holdsReference(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.String:
		return false
	case reflect.Array:
		return holdsReference(t.Elem())
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if holdsReference(t.Field(i).Type) {
				return true
			}
		}
		return false
	}
	return true
}

// copyPlans caches structCopyPlan by struct type.
var copyPlans sync.Map // reflect.Type -> []int, or nil: not copyable

// structCopyPlan lists the fields of the struct type t that copyDeep
// copies one by one (the exported ones that can hold a reference); ok is
// false when an unexported field holds one (but an entry's *readEntry).
func structCopyPlan(t reflect.Type) (fields []int, ok bool) {
	if p, ok := copyPlans.Load(t); ok {
		fields, _ := p.([]int)
		return fields, p != nil
	}
	fields = []int{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !holdsReference(f.Type) || f.Type == readEntryType {
			continue
		}
		if !f.IsExported() {
			copyPlans.Store(t, nil)
			return nil, false
		}
		fields = append(fields, i)
	}
	copyPlans.Store(t, fields)
	return fields, true
}

// copyElems sets each element of out (a slice or array as long as v) to
// a deep copy of v's; false when one cannot be copied.
func copyElems(out, v reflect.Value) bool {
	for i := 0; i < v.Len(); i++ {
		e, ok := copyDeep(v.Index(i))
		if !ok {
			return false
		}
		out.Index(i).Set(e)
	}
	return true
}
