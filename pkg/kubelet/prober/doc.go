// Package prober runs the liveness, readiness and startup probes of the
// containers a kubelet runs, as upstream's prober manager does.
//
// One worker (a goroutine) per probe of each running container fires
// every periodSeconds of the injected clock, after initialDelaySeconds
// from the container's start. A probe is exec (the runtime's ExecSync),
// httpGet (status 200–399 succeeds; redirects are followed to the same
// host, a redirect elsewhere succeeds with a warning, as upstream), tcpSocket
// (a connection opens) or grpc (the standard health service answers
// SERVING), each bounded by timeoutSeconds.
//
// Results, as upstream's: a readiness result starts as Failure, liveness
// as Success, startup as Unknown; a result changes only after
// successThreshold consecutive successes or failureThreshold consecutive
// failures; liveness and readiness probes wait until the startup probe
// has succeeded; once a startup probe succeeded it is not run again for
// that container. A failed probe records an "Unhealthy" warning event
// ("Liveness probe failed: <output>"). When liveness or startup reaches
// Failure, the worker holds (probes no more) until the container is
// replaced: the kubelet kills and restarts it. A probe that cannot be run
// (a runtime error) is thrown away, as upstream.
//
// Invariants: results are kept per container ID, so a restarted
// container starts over from the initial results; every change of a
// result calls Config.OnChange with the pod's UID (the kubelet then syncs
// that pod); all time comes from Config.Clock. The decision of one probe
// round (observe) is a function of the previous state and the probe's
// outcome that tests call directly.
package prober
