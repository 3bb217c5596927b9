package main

import (
	"fmt"
	"math/rand"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// A place a selector can reach in the objects of one kind: its path (struct fields, map keys
// present or missing, slice indexes in and out of range) and the values found there.
type place struct {
	path   []string
	values []reflect.Value
}

type generator struct {
	rnd    *rand.Rand
	places []*place
}

const maxDepth = 7

var identifier = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_/]*$`)
var pointerSegment = regexp.MustCompile(`^[\pL\pN\-_.~:|]+$`)

func newGenerator(seed int64, kind string, objects []interface{}) *generator {
	// One stream per kind, so adding a kind does not change the others' cases.
	var salt int64
	for _, c := range kind {
		salt = salt*31 + int64(c)
	}
	g := &generator{rnd: rand.New(rand.NewSource(seed ^ salt))}
	byKey := map[string]*place{}
	var order []string
	var walk func(v reflect.Value, path []string)
	record := func(v reflect.Value, path []string) {
		key := strings.Join(path, "\x00")
		p, ok := byKey[key]
		if !ok {
			p = &place{path: append([]string(nil), path...)}
			byKey[key] = p
			order = append(order, key)
		}
		p.values = append(p.values, v)
	}
	walk = func(v reflect.Value, path []string) {
		if len(path) > 0 {
			record(v, path)
		}
		if len(path) >= maxDepth {
			return
		}
		for v.IsValid() && (v.Kind() == reflect.Ptr || v.Kind() == reflect.Interface) {
			if v.IsNil() {
				// below a nil pointer to a struct, the type's fields are still selectors to try
				// (go-bexpr v0.1.2 validates them against the type before it reads any row)
				if v.Kind() == reflect.Ptr && v.Type().Elem().Kind() == reflect.Struct {
					walk(reflect.Zero(v.Type().Elem()), path)
				}
				return
			}
			v = v.Elem()
		}
		switch v.Kind() {
		case reflect.Struct:
			t := v.Type()
			for i := 0; i < t.NumField(); i++ {
				if t.Field(i).PkgPath != "" {
					continue
				}
				walk(v.Field(i), append(path, t.Field(i).Name))
			}
		case reflect.Map:
			if v.Type().Key().Kind() != reflect.String {
				return
			}
			keys := v.MapKeys()
			sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
			for _, k := range keys {
				walk(v.MapIndex(k), append(path, k.String()))
			}
			record(reflect.Value{}, append(path, "missing_key"))
		case reflect.Slice, reflect.Array:
			if v.Type().Elem().Kind() == reflect.Uint8 {
				return
			}
			// go-bexpr v0.1.2 crosses a slice of structs without an index: the element's fields
			// continue the selector, and an index (tried now and then) is not a valid selector
			for i := 0; i < v.Len() && i < 3; i++ {
				walk(v.Index(i), path)
			}
			if v.Len() == 0 {
				// an empty slice of structs: its element type's fields, as above
				walk(reflect.Zero(v.Type().Elem()), path)
			}
			record(reflect.Value{}, append(path, "0"))
		}
	}
	for _, obj := range objects {
		walk(reflect.ValueOf(obj), nil)
	}
	for _, key := range order {
		g.places = append(g.places, byKey[key])
	}
	return g
}

// placeKind: the kind of the first value found at a place, pointers followed.
func placeKind(p *place) reflect.Kind {
	for _, v := range p.values {
		for v.IsValid() && v.Kind() == reflect.Ptr && !v.IsNil() {
			v = v.Elem()
		}
		if v.IsValid() && v.Kind() != reflect.Ptr {
			return v.Kind()
		}
	}
	return reflect.Invalid
}

func (g *generator) pick(n int) int { return g.rnd.Intn(n) }

func (g *generator) chance(percent int) bool { return g.rnd.Intn(100) < percent }

// expression returns a filter and the type its first selector reaches (the case's category).
func (g *generator) expression() (string, string) {
	var target string
	var build func(depth int) string
	build = func(depth int) string {
		r := g.pick(100)
		switch {
		case depth < 2 && r < 12:
			return "not " + g.wrap(build(depth+1))
		case depth < 2 && r < 30:
			op := []string{" and ", " or "}[g.pick(2)]
			return g.wrap(build(depth+1)) + op + g.wrap(build(depth+1))
		default:
			p := g.places[g.pick(len(g.places))]
			if target == "" {
				target = describe(p)
			}
			return g.match(p, g.selector(p.path), p)
		}
	}
	expr := build(0)
	if g.chance(3) {
		expr, target = g.malformed(expr), "parse"
	}
	return expr, target
}

func (g *generator) wrap(e string) string {
	if strings.Contains(e, " or ") || strings.Contains(e, " and ") || g.chance(20) {
		return "(" + e + ")"
	}
	return e
}

// describe names a place's category: the Go type of its first value, or "missing".
func describe(p *place) string {
	for _, v := range p.values {
		if v.IsValid() {
			return typeName(v)
		}
	}
	return "missing"
}

// selector renders a path: dotted, with ["key"] / [`key`] for segments that are not identifiers
// (v0.1.2's grammar has no JSON-pointer selectors).
func (g *generator) selector(path []string) string {
	var b strings.Builder
	for i, s := range path {
		digits := s != "" && strings.Trim(s, "0123456789") == ""
		switch {
		case i == 0 && identifier.MatchString(s):
			b.WriteString(s)
		case i == 0:
			return g.selector(append([]string{"X"}, path...)) // cannot start with a key: an unknown field
		case digits:
			b.WriteString("." + s)
		case identifier.MatchString(s) && !g.chance(15):
			b.WriteString("." + s)
		case g.chance(30) && !strings.Contains(s, "`"):
			b.WriteString("[`" + s + "`]")
		default:
			b.WriteString("[" + strconv.Quote(s) + "]")
		}
	}
	return b.String()
}

var operators = []string{"==", "!=", "in", "not in", "contains", "not contains", "is empty", "is not empty", "matches", "not matches"}

var pool = []string{"", "0", "1", "-1", "2", "1.5", "true", "false", "True", "0x10", "1e3", "18446744073709551615", "-9223372036854775808",
	"abc", "passing", "critical", "warning", "maintenance", "default", "dc1", "web", "db", "v1", "lan", "wan", "node1", ".*", "^w", "[", "a|b", "(?i)PASS", "\\d+", "http", "team", "serfHealth"}

// validOperators: what go-bexpr v0.1.2 accepts on a field of each kind (field_config.go), so that
// most cases get past creation and reach the rows.
var validOperators = map[reflect.Kind][]string{
	reflect.String: {"==", "!=", "in", "not in", "contains", "not contains", "matches", "not matches"},
	reflect.Slice:  {"in", "not in", "contains", "not contains", "is empty", "is not empty"},
	reflect.Map:    {"in", "not in", "contains", "not contains", "is empty", "is not empty"},
	reflect.Int:    {"==", "!="},
	reflect.Bool:   {"==", "!="},
}

func (g *generator) match(p *place, sel string, _ *place) string {
	op := operators[g.pick(len(operators))]
	if valid := validOperators[placeKind(p)]; len(valid) > 0 && g.chance(75) {
		op = valid[g.pick(len(valid))]
	}
	if op == "is empty" || op == "is not empty" {
		return sel + " " + op
	}
	raw := g.value(p, op)
	val := g.literal(raw)
	if op == "in" || op == "not in" {
		return val + " " + op + " " + sel
	}
	return sel + " " + op + " " + val
}

// value picks a raw value: one found at the place (whole, or a piece of a string), or one of the pool.
func (g *generator) value(p *place, op string) string {
	if g.chance(60) {
		var found []string
		for _, v := range p.values {
			found = append(found, scalars(v)...)
		}
		if len(found) > 0 {
			s := found[g.pick(len(found))]
			if len(s) > 2 && g.chance(25) {
				i := g.pick(len(s) - 1)
				s = s[i : i+1+g.pick(len(s)-i)]
			}
			if (op == "matches" || op == "not matches") && g.chance(40) {
				s = "^" + regexp.QuoteMeta(s)
			}
			return s
		}
	}
	return pool[g.pick(len(pool))]
}

// scalars: the values at a place as go-bexpr's coercion would see them, and those of a collection's elements and keys.
func scalars(v reflect.Value) []string {
	for v.IsValid() && (v.Kind() == reflect.Ptr || v.Kind() == reflect.Interface) {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if !v.IsValid() {
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		return []string{v.String()}
	case reflect.Bool:
		return []string{strconv.FormatBool(v.Bool())}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return []string{strconv.FormatInt(v.Int(), 10)}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return []string{strconv.FormatUint(v.Uint(), 10)}
	case reflect.Float32, reflect.Float64:
		return []string{strconv.FormatFloat(v.Float(), 'g', -1, 64)}
	case reflect.Map:
		var out []string
		for _, k := range v.MapKeys() {
			out = append(out, fmt.Sprint(k.Interface()))
		}
		sort.Strings(out)
		return out
	case reflect.Slice:
		var out []string
		for i := 0; i < v.Len() && i < 3; i++ {
			out = append(out, scalars(v.Index(i))...)
		}
		return out
	}
	return nil
}

var number = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?$`)

// literal writes a raw value as the grammar reads it back: a quoted or raw string, a bare number,
// or (as users do) a bare word, which go-bexpr v0.1.2 takes as its own text (a selector-shaped value).
func (g *generator) literal(raw string) string {
	switch {
	case number.MatchString(raw) && g.chance(60):
		return raw
	case identifier.MatchString(raw) && g.chance(20):
		return raw
	case !strings.Contains(raw, "`") && g.chance(20):
		return "`" + raw + "`"
	default:
		return strconv.Quote(raw)
	}
}

// malformed breaks an expression the way people do: cut short, an unknown operator, a dangling
// connective, a bad number, a later go-bexpr's `is nil` and `any`, a single-quoted string, the
// specification's ['key'] form.
func (g *generator) malformed(e string) string {
	switch g.pick(9) {
	case 8:
		return "any Checks as c { c.Status == passing }"
	case 7:
		return "Meta['team'] == \"core\"" // the specification's form
	case 0:
		if len(e) > 3 {
			return e[:len(e)-1-g.pick(3)]
		}
		return e + " =="
	case 1:
		return e + " and"
	case 2:
		return "(" + e
	case 3:
		return "ID is nil"
	case 4:
		return "Port == 1.5.5"
	case 5:
		return "Node == 'web'"
	default:
		return "Node ~= \"web\""
	}
}
