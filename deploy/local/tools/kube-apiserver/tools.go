//go:build tools

// Package tools pins k8s.io/kubernetes in go.mod: main packages cannot be imported, so the
// apiserver's app package stands in for cmd/kube-apiserver, which build-tools.sh builds.
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver/app"
