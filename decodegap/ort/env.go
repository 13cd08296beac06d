package ort

import (
	"fmt"
	"os"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// env is the process-wide ONNX Runtime environment.
var env struct {
	mu sync.Mutex
	// library is the path the environment was loaded from; "" until Init
	// succeeds, or when another package initialized onnxruntime_go first.
	library string
	// ready is true once the environment exists.
	ready bool
}

// Init loads the ONNX Runtime shared library at library and creates the
// process-wide environment, once per process; "" means the library Find
// reports. Later calls return nil when library is "" or the same path, and
// an error naming both paths otherwise (a process holds one ONNX Runtime).
// A failed call can be retried with another path. Init is safe for
// concurrent use; the environment is never destroyed. If onnxruntime_go was
// initialized by other code, Init accepts that environment as it is.
func Init(library string) error {
	env.mu.Lock()
	defer env.mu.Unlock()
	if env.ready || ort.IsInitialized() {
		env.ready = true
		if library != "" && env.library != "" && library != env.library {
			return fmt.Errorf("ONNX Runtime is already loaded from %s in this process, so %s cannot be: use one library per process (unset %s or make it name %s)",
				env.library, library, LibraryEnv, env.library)
		}
		return nil
	}
	if library == "" {
		parts, err, _ := findEach(os.Getenv, workDir())
		if err != nil {
			return err
		}
		library = parts.Library
	} else if !isFile(library) {
		return &MissingError{Part: "ONNX Runtime library", Path: library, Var: LibraryEnv}
	} else if err := checkPart(library, partLibrary, false, ""); err != nil {
		return err
	}
	ort.SetSharedLibraryPath(library)
	if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
		return fmt.Errorf("loading ONNX Runtime from %s: %w (it must be libonnxruntime.so.1 from ONNX Runtime 1.30.0 for linux/x64: run `%s`, or set %s)",
			library, err, InstallCommand, LibraryEnv)
	}
	env.library = library
	env.ready = true
	return nil
}

// Version returns the version string of the loaded ONNX Runtime, such as
// "1.30.0", loading it first (Init("")) if needed.
func Version() (string, error) {
	if err := Init(""); err != nil {
		return "", err
	}
	return ort.GetVersion(), nil
}
