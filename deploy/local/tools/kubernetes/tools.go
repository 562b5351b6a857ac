//go:build tools

// Package tools pins k8s.io/kubernetes in go.mod: main packages cannot be imported, so each
// server's app package stands in for its cmd/ main package, which build-tools.sh builds.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
)
