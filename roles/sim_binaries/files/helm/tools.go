//go:build tools

package helmbuild

import _ "helm.sh/helm/v3/cmd/helm"
