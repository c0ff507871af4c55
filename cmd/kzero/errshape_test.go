package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// belowAPI are the folders of the packages under net/api (DESIGN.md
// "Layers"): they report errors in one shape, Go errors that wrap
// franz-go's kerr sentinels, and net/api turns them into codes at the edge.
var belowAPI = []string{"coord", "replica", "log", "record", "index", "vfs", "msgset", "net/wire", "net/server", "net/sasl", "net/quota"}

const kerrPath = "github.com/twmb/franz-go/pkg/kerr"

// TestNoKerrErrorValuesBelowAPI keeps a typed nil *kerr.Error from ever
// being returned as an error below net/api: no function result or
// parameter, struct field, variable, slice, channel or map value there has
// type *kerr.Error (a map key may: a table from sentinel to error). The one
// exception is a local variable that only serves as errors.As's target and
// is read through its fields or as a map key, never as a value.
func TestNoKerrErrorValuesBelowAPI(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	for _, dir := range belowAPI {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			for _, p := range kerrErrorUses(f) {
				t.Errorf("%s: %s", fset.Position(p.pos), p.what)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

type kerrUse struct {
	pos  token.Pos
	what string
}

// kerrErrorUses lists the places in f that declare a *kerr.Error value.
func kerrErrorUses(f *ast.File) []kerrUse {
	name := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == kerrPath {
			name = "kerr"
			if imp.Name != nil {
				name = imp.Name.Name
			}
		}
	}
	if name == "" || name == "_" {
		return nil
	}
	isKerrPtr := func(e ast.Expr) bool {
		s, ok := e.(*ast.StarExpr)
		if !ok {
			return false
		}
		sel, ok := s.X.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Error" {
			return false
		}
		id, ok := sel.X.(*ast.Ident)
		return ok && id.Name == name
	}
	// holds reports whether type expression e holds a *kerr.Error value
	// (itself, or as an element, a map value, a pointer's target).
	var holds func(e ast.Expr) bool
	holds = func(e ast.Expr) bool {
		if isKerrPtr(e) {
			return true
		}
		switch e := e.(type) {
		case *ast.StarExpr:
			return holds(e.X)
		case *ast.ArrayType:
			return holds(e.Elt)
		case *ast.ChanType:
			return holds(e.Value)
		case *ast.MapType:
			return holds(e.Value)
		case *ast.ParenExpr:
			return holds(e.X)
		}
		return false
	}
	var uses []kerrUse
	fields := func(l *ast.FieldList, what string) {
		if l == nil {
			return
		}
		for _, fd := range l.List {
			if holds(fd.Type) {
				uses = append(uses, kerrUse{fd.Pos(), what + " of type *kerr.Error"})
			}
		}
	}
	inspect(f, func(n ast.Node, stack []ast.Node) {
		switch n := n.(type) {
		case *ast.FuncType:
			fields(n.Params, "parameter")
			fields(n.Results, "result")
		case *ast.StructType:
			fields(n.Fields, "struct field")
		case *ast.InterfaceType:
			// its methods are FuncTypes, visited on their own
		case *ast.TypeAssertExpr:
			if n.Type != nil && holds(n.Type) {
				uses = append(uses, kerrUse{n.Pos(), "type assertion to *kerr.Error (use errors.As into an errors.As-only variable)"})
			}
		case *ast.CaseClause:
			for _, e := range n.List {
				if holds(e) {
					uses = append(uses, kerrUse{e.Pos(), "type switch case *kerr.Error"})
				}
			}
		case *ast.ValueSpec:
			if n.Type == nil || !holds(n.Type) {
				break
			}
			body := enclosingBody(stack)
			for _, id := range n.Names {
				if body == nil || !isKerrPtr(n.Type) || len(n.Values) > 0 || !onlyAsTarget(body, id) {
					uses = append(uses, kerrUse{id.Pos(), "variable " + id.Name + " of type *kerr.Error"})
				}
			}
		}
	})
	return uses
}

// inspect walks the syntax tree under root in depth-first order, calling
// f with each node and its ancestors (stack, root first, n last).
func inspect(root ast.Node, f func(n ast.Node, stack []ast.Node)) {
	var stack []ast.Node
	ast.Inspect(root, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		f(n, stack)
		return true
	})
}

// enclosingBody is the body of the innermost function around the node on
// top of stack, nil at package level.
func enclosingBody(stack []ast.Node) *ast.BlockStmt {
	for i := len(stack) - 1; i >= 0; i-- {
		switch n := stack[i].(type) {
		case *ast.FuncDecl:
			return n.Body
		case *ast.FuncLit:
			return n.Body
		}
	}
	return nil
}

// onlyAsTarget reports whether every use of the variable id declares in
// body is &id as errors.As's target, id.Field, or a map index m[id].
func onlyAsTarget(body *ast.BlockStmt, id *ast.Ident) bool {
	ok := true
	inspect(body, func(n ast.Node, stack []ast.Node) {
		use, isIdent := n.(*ast.Ident)
		if !isIdent || use.Name != id.Name || use == id {
			return
		}
		parent := stack[len(stack)-2]
		switch p := parent.(type) {
		case *ast.SelectorExpr:
			if p.X == use {
				return
			}
		case *ast.IndexExpr:
			if p.Index == use {
				return
			}
		case *ast.UnaryExpr:
			if p.Op == token.AND && len(stack) >= 3 {
				if call, isCall := stack[len(stack)-3].(*ast.CallExpr); isCall && len(call.Args) == 2 && call.Args[1] == p {
					if sel, isSel := call.Fun.(*ast.SelectorExpr); isSel && sel.Sel.Name == "As" {
						if pkg, isPkg := sel.X.(*ast.Ident); isPkg && pkg.Name == "errors" {
							return
						}
					}
				}
			}
		}
		ok = false
	})
	return ok
}

// TestKerrGuardCatches checks the guard on examples of what it must refuse
// and what it must let through.
func TestKerrGuardCatches(t *testing.T) {
	for _, c := range []struct {
		src  string
		uses int
	}{
		{`func f() *kerr.Error { return nil }`, 1},
		{`func f() (int, *kerr.Error) { return 0, nil }`, 1},
		{`func f(e *kerr.Error) error { return e }`, 1},
		{`type r struct{ Err *kerr.Error; Msg string }`, 1},
		{`type r struct{ Errs []*kerr.Error }`, 1},
		{`var v *kerr.Error`, 1},
		{`var m = map[*kerr.Error]error{}`, 0},
		{`var m map[int]*kerr.Error`, 1},
		{`func f() error { var e *kerr.Error; return e }`, 1},
		{`func f(err error) error { e, _ := err.(*kerr.Error); return e }`, 1},
		{`func f() { g := func(e *kerr.Error) {}; _ = g }`, 1},
		{`func f(err error) int16 { var e *kerr.Error; if errors.As(err, &e) { return e.Code }; return 0 }`, 0},
		{`func f(err error, m map[*kerr.Error]error) error { var e *kerr.Error; if errors.As(err, &e) { return m[e] }; return nil }`, 0},
		{`func f(err error) error { return fmt.Errorf("%w: x", kerr.InvalidRequest) }`, 0},
	} {
		src := "package p\nimport (\"errors\"; \"fmt\"; \"" + kerrPath + "\")\nvar _, _ = errors.As, fmt.Errorf\n" + c.src
		f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if got := kerrErrorUses(f); len(got) != c.uses {
			t.Errorf("%s: %d uses found, want %d: %v", c.src, len(got), c.uses, got)
		}
	}
}
