//go:build tools

package kai

import (
	_ "github.com/NVIDIA/KAI-scheduler/cmd/admission"
	_ "github.com/NVIDIA/KAI-scheduler/cmd/binder"
	_ "github.com/NVIDIA/KAI-scheduler/cmd/podgroupcontroller"
	_ "github.com/NVIDIA/KAI-scheduler/cmd/podgrouper"
	_ "github.com/NVIDIA/KAI-scheduler/cmd/queuecontroller"
	_ "github.com/NVIDIA/KAI-scheduler/cmd/scheduler"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "helm.sh/helm/v3/cmd/helm"
)
