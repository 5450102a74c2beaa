// Package printers provides server-side Table printing: the column
// definitions and row cells that kube-apiserver returns when a client such as
// kubectl asks for
//
//	Accept: application/json;as=Table;v=v1;g=meta.k8s.io
//
// For returns the Handler of a built-in group/resource; Default returns the
// generic Name + "Created At" handler upstream uses for resources it has no
// printer for (roles, clusterroles and limitranges map to it too). The
// apiserver builds the metav1.Table: it copies Handler.Columns into
// columnDefinitions (leaving them out when the request's TableOptions set
// noHeaders, as upstream does) and makes one row per item from Handler.Cells,
// setting the row's Object itself and its conditions from Handler.Conditions
// (only pods have any).
//
// The output mirrors upstream's k8s.io/kubernetes/pkg/printers/internalversion
// printers (and, for customresourcedefinitions, the apiextensions-apiserver
// table convertor), translated to the versioned k8s.io/api types:
//
//   - Column names, types, formats, descriptions and priorities are upstream's.
//     Descriptions come from the same SwaggerDoc maps upstream reads (some of
//     them beta types, e.g. extensions/v1beta1 for deployments).
//   - Every column is always filled, including priority 1 ("wide") ones:
//     upstream's server always prints wide and kubectl hides priority > 0
//     columns unless -o wide is given. len(Cells(...)) == len(Columns).
//   - Cell Go types are upstream's (string, int64, bool; never int or int32),
//     so the JSON encoding of a row is byte-for-byte the same. Some cells
//     deliberately disagree with their column's declared type, as upstream's
//     do (for example Deployment "Up-to-date" is declared string but holds an
//     int64, CronJob "Suspend" is declared boolean but holds "True"/"False").
//   - Durations (AGE and the like) are duration.HumanDuration of the time
//     from the timestamp to the caller-supplied now, "<unknown>" for a zero
//     timestamp. Nothing reads the wall clock, so output is reproducible.
//   - Where upstream converts a versioned object to its internal form before
//     printing, the same defaults apply here: a nil replicas pointer prints
//     as 0, secret stringData counts towards DATA, an autoscaling/v1 HPA is
//     lifted to v2 (annotated metrics, implicit 80% CPU target), and an
//     events.k8s.io/v1 Event is shown through its core/v1 fields.
//   - The first column is Name (type string, format name) for every handler
//     except events, where upstream puts Name last (priority 1).
//
// The package holds no mutable state: the handler table is built once at
// initialisation, and For and Default hand out copies of the column slices,
// so callers may modify what they get.
package printers
