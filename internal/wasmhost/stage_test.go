package wasmhost

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
	wazeroapi "github.com/tetratelabs/wazero/api"
)

// TestModuleFieldChecksNameAndType: a field that is missing, or is not an
// wazeroapi.Module, reads as nil (the caller then takes the SDK's path); an
// unexported wazeroapi.Module field is read. The real Plugin's fields are
// checked end to end by the harness (TestStagingMatchesStandardPath).
func TestModuleFieldChecksNameAndType(t *testing.T) {
	type module struct{ wazeroapi.Module }
	want := module{}
	v := reflect.ValueOf(&struct {
		mainModule wazeroapi.Module
		extism     string
		other      int
	}{mainModule: want, extism: "not a module"}).Elem()
	require.Equal(t, wazeroapi.Module(want), moduleField(v, "mainModule"))
	require.Nil(t, moduleField(v, "extism"), "wrong type")
	require.Nil(t, moduleField(v, "other"), "wrong type")
	require.Nil(t, moduleField(v, "missing"), "no such field")

	nilField := reflect.ValueOf(&struct{ extism wazeroapi.Module }{}).Elem()
	require.Nil(t, moduleField(nilField, "extism"), "nil interface")
}
