package ort

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ort "github.com/yalue/onnxruntime_go"
)

func TestOptionsString(t *testing.T) {
	assert.Equal(t, "intra=0,inter=0,spin=on,sequential", Options{}.String())
	assert.Equal(t, "intra=2,inter=1,spin=off,parallel", Options{IntraOpThreads: 2, InterOpThreads: 1, Spinning: SpinOff, Mode: Parallel}.String())
	assert.Equal(t, "Spinning(7)", Spinning(7).String())
	assert.Equal(t, "Mode(7)", Mode(7).String())
	assert.Equal(t, "intra=1,inter=0,spin=on,sequential,interspin=off,opt=basic,arena=off,custom",
		Options{IntraOpThreads: 1, InterSpinning: Off, GraphOpt: OptBasic, Arena: Off, Custom: func(*ort.SessionOptions) error { return nil }}.String())
	assert.Equal(t, "Toggle(9)", Toggle(9).String())
	assert.Equal(t, "GraphOpt(9)", GraphOpt(9).String())
	assert.Equal(t, "extended", OptExtended.String())
}

func TestOptionsValidate(t *testing.T) {
	assert.NoError(t, Options{}.Validate())
	assert.NoError(t, Options{IntraOpThreads: 2, InterOpThreads: 2, Spinning: SpinOff, Mode: Parallel}.Validate())
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{IntraOpThreads: -1}, "Options.IntraOpThreads is -1: use 0 for ONNX Runtime's default or a positive thread count"},
		{Options{InterOpThreads: -2}, "Options.InterOpThreads is -2: use 0 for ONNX Runtime's default or a positive thread count"},
		{Options{Spinning: 2}, "Options.Spinning is 2: use ort.SpinOn or ort.SpinOff"},
		{Options{Mode: -1}, "Options.Mode is -1: use ort.Sequential or ort.Parallel"},
		{Options{InterSpinning: 3}, "Options.InterSpinning is 3: use ort.Default, ort.On or ort.Off"},
		{Options{GraphOpt: 5}, "Options.GraphOpt is 5: use one of ort.OptDefault, OptDisable, OptBasic, OptExtended, OptAll"},
		{Options{Arena: -1}, "Options.Arena is -1: use ort.Default, ort.On or ort.Off"},
	} {
		assert.EqualError(t, c.o.Validate(), c.want)
	}
}

func TestSessionOptionsSetSpinningEntries(t *testing.T) {
	Require(t)
	require.NoError(t, Init(""))
	for _, c := range []struct {
		spin Spinning
		want string
	}{{SpinOn, "1"}, {SpinOff, "0"}} {
		so, err := Options{IntraOpThreads: 2, Spinning: c.spin, Mode: Parallel}.sessionOptions()
		require.NoError(t, err)
		for _, key := range []string{keyIntraSpin, keyInterSpin} {
			got, err := so.GetSessionConfigEntry(key)
			require.NoError(t, err)
			assert.Equal(t, c.want, got, "%s with Spinning %v", key, c.spin)
		}
		require.NoError(t, so.Destroy())
	}
	for _, c := range []struct {
		o            Options
		intra, inter string
	}{
		{Options{Spinning: SpinOn, InterSpinning: Off}, "1", "0"},
		{Options{Spinning: SpinOff, InterSpinning: On}, "0", "1"},
		{Options{Spinning: SpinOff, InterSpinning: Default, GraphOpt: OptAll, Arena: On}, "0", "0"},
	} {
		so, err := c.o.sessionOptions()
		require.NoError(t, err)
		got, err := so.GetSessionConfigEntry(keyIntraSpin)
		require.NoError(t, err)
		assert.Equal(t, c.intra, got, "%v", c.o)
		got, err = so.GetSessionConfigEntry(keyInterSpin)
		require.NoError(t, err)
		assert.Equal(t, c.inter, got, "%v", c.o)
		require.NoError(t, so.Destroy())
	}
	_, err := Options{IntraOpThreads: -1}.sessionOptions()
	assert.EqualError(t, err, "Options.IntraOpThreads is -1: use 0 for ONNX Runtime's default or a positive thread count")
}

func TestInitTwice(t *testing.T) {
	parts := Require(t)
	require.NoError(t, Init(parts.Library))
	require.NoError(t, Init(parts.Library), "the same library again is fine")
	require.NoError(t, Init(""), "\"\" means whatever is loaded")
	if env.library == parts.Library {
		other := parts.Library + ".other"
		assert.EqualError(t, Init(other), "ONNX Runtime is already loaded from "+parts.Library+" in this process, so "+other+
			" cannot be: use one library per process (unset ONNXRUNTIME_LIB or make it name "+parts.Library+")")
	}
	v, err := Version()
	require.NoError(t, err)
	assert.Equal(t, "1.30.0", v)
}
