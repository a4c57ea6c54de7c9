package clock_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// mayCallNow are the directories, relative to the module root, whose code
// may call time.Now: the clock itself and cli, which wires the system clock.
// Everything else reads a clock.Clock, so that tests can move time.
// tools/ holds the load generator, which measures real latencies against a
// running server: wall time is what it reports, not service time.
var mayCallNow = []string{"internal/clock", "internal/cli", "tools"}

// TestOnlyClockCallsTimeNow walks every non-test Go file of the module and
// fails on a call of time.Now outside mayCallNow (STYLE.md, Time). It parses
// the files rather than grepping them, so a comment that mentions time.Now
// passes and an import renamed (t "time") or dot-imported does not hide a call.
func TestOnlyClockCallsTimeNow(t *testing.T) {
	root := moduleRoot(t)
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			return skipDir(root, path, rel, d.Name())
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || allowed(rel) {
			return nil
		}
		files++
		for _, pos := range timeNowCalls(t, path) {
			t.Errorf("%s:%d calls time.Now; only %s may: read a clock.Clock instead",
				rel, pos.Line, strings.Join(mayCallNow, " and "))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", root, err)
	}
	if files == 0 {
		t.Fatalf("found no Go files under %s", root)
	}
}

// skipDir skips what the go command ignores (testdata, vendor, names
// starting with . or _) and nested modules, which are not this module.
func skipDir(root, path, rel, name string) error {
	if path == root {
		return nil
	}
	if name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return filepath.SkipDir
	}
	if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
		return filepath.SkipDir
	}
	return nil
}

func allowed(rel string) bool {
	for _, dir := range mayCallNow {
		if strings.HasPrefix(rel, dir+"/") {
			return true
		}
	}
	return false
}

// moduleRoot goes up from the package directory to the go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the package directory")
		}
		dir = parent
	}
}

// timeNowCalls returns the positions of the calls of time.Now in a file.
func timeNowCalls(t *testing.T, path string) []token.Position {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Errorf("parse %s: %v", path, err)
		return nil
	}
	name, dot := "", false
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p != "time" {
			continue
		}
		switch {
		case imp.Name == nil:
			name = "time"
		case imp.Name.Name == ".":
			dot = true
		default:
			name = imp.Name.Name
		}
	}
	if name == "" && !dot {
		return nil
	}
	var out []token.Position
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		switch fn := call.Fun.(type) {
		case *ast.SelectorExpr:
			if x, ok := fn.X.(*ast.Ident); ok && x.Name == name && fn.Sel.Name == "Now" {
				out = append(out, fset.Position(call.Pos()))
			}
		case *ast.Ident:
			if dot && fn.Name == "Now" {
				out = append(out, fset.Position(call.Pos()))
			}
		}
		return true
	})
	return out
}

func TestTimeNowCalls(t *testing.T) {
	for _, tt := range []struct {
		name string
		src  string
		want int
	}{
		{"call", `package p; import "time"; var x = time.Now()`, 1},
		{"two calls", `package p; import "time"; func f() { _ = time.Now(); _ = time.Now().UTC() }`, 2},
		{"renamed import", `package p; import tm "time"; var x = tm.Now()`, 1},
		{"dot import", `package p; import . "time"; var x = Now()`, 1},
		{"comment and string", `package p; import "time"; // time.Now()
			var s = "time.Now()"; var d = time.Second`, 0},
		{"a clock's Now", `package p; import "time"; type c struct{}; func (c) Now() time.Time { return time.Time{} }; var x = c{}.Now()`, 0},
		{"no time import", `package p; type T struct{}; func (T) Now() int { return 0 }; var time T; var x = time.Now()`, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "p.go")
			if err := os.WriteFile(path, []byte(tt.src), 0o600); err != nil {
				t.Fatal(err)
			}
			if got := len(timeNowCalls(t, path)); got != tt.want {
				t.Errorf("timeNowCalls() found %d calls, want %d", got, tt.want)
			}
		})
	}
}
