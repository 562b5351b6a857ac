// Command kstatus prints how sigs.k8s.io/cli-utils' kstatus, the library Flux, Argo CD, kpt and
// `kubectl apply --wait` judge health with, reads each object it is given: one JSON object per
// line on stdin, one JSON line {"status": "...", "message": "..."} per object on stdout.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 16<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		// As the apiserver's clients decode it: whole numbers as int64, which kstatus expects.
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(in.Bytes()); err != nil {
			fmt.Fprintf(os.Stderr, "kstatus: not a Kubernetes object: %v\n", err)
			os.Exit(2)
		}
		res, err := status.Compute(obj)
		if err != nil {
			fmt.Fprintf(os.Stderr, "kstatus: %v\n", err)
			os.Exit(1)
		}
		if err := out.Encode(map[string]string{"status": res.Status.String(), "message": res.Message}); err != nil {
			fmt.Fprintf(os.Stderr, "kstatus: %v\n", err)
			os.Exit(1)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintf(os.Stderr, "kstatus: %v\n", err)
		os.Exit(2)
	}
}
