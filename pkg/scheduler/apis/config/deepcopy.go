package config

// DeepCopy returns a copy of c sharing no memory with it (typed args are
// copied with DeepCopyObject, raw args byte for byte).
func (c *KubeSchedulerConfiguration) DeepCopy() *KubeSchedulerConfiguration {
	if c == nil {
		return nil
	}
	out := *c
	out.Parallelism = copyPtr(c.Parallelism)
	out.LeaderElection.LeaderElect = copyPtr(c.LeaderElection.LeaderElect)
	out.EnableProfiling = copyPtr(c.EnableProfiling)
	out.EnableContentionProfiling = copyPtr(c.EnableContentionProfiling)
	out.PercentageOfNodesToScore = copyPtr(c.PercentageOfNodesToScore)
	out.PodInitialBackoffSeconds = copyPtr(c.PodInitialBackoffSeconds)
	out.PodMaxBackoffSeconds = copyPtr(c.PodMaxBackoffSeconds)
	if c.Profiles != nil {
		out.Profiles = make([]KubeSchedulerProfile, len(c.Profiles))
		for i := range c.Profiles {
			out.Profiles[i] = *c.Profiles[i].DeepCopy()
		}
	}
	if c.Extenders != nil {
		out.Extenders = make([]Extender, len(c.Extenders))
		for i, e := range c.Extenders {
			e.ManagedResources = copySlice(e.ManagedResources)
			if e.TLSConfig != nil {
				tls := *e.TLSConfig
				tls.CertData, tls.KeyData, tls.CAData = copySlice(tls.CertData), copySlice(tls.KeyData), copySlice(tls.CAData)
				e.TLSConfig = &tls
			}
			out.Extenders[i] = e
		}
	}
	return &out
}

// DeepCopy returns a copy of p sharing no memory with it.
func (p *KubeSchedulerProfile) DeepCopy() *KubeSchedulerProfile {
	if p == nil {
		return nil
	}
	out := *p
	out.SchedulerName = copyPtr(p.SchedulerName)
	out.PercentageOfNodesToScore = copyPtr(p.PercentageOfNodesToScore)
	out.Plugins = p.Plugins.DeepCopy()
	if p.PluginConfig != nil {
		out.PluginConfig = make([]PluginConfig, len(p.PluginConfig))
		for i, pc := range p.PluginConfig {
			out.PluginConfig[i] = PluginConfig{Name: pc.Name, Args: *pc.Args.DeepCopy()}
		}
	}
	return &out
}

// DeepCopy returns a copy of p sharing no memory with it.
func (p *Plugins) DeepCopy() *Plugins {
	if p == nil {
		return nil
	}
	out := &Plugins{}
	src, dst := p.sets(), out.sets()
	for i := range src {
		dst[i].set.Enabled = copyPlugins(src[i].set.Enabled)
		dst[i].set.Disabled = copyPlugins(src[i].set.Disabled)
	}
	return out
}

func copyPlugins(ps []Plugin) []Plugin {
	if ps == nil {
		return nil
	}
	out := make([]Plugin, len(ps))
	for i, p := range ps {
		out[i] = Plugin{Name: p.Name, Weight: copyPtr(p.Weight)}
	}
	return out
}
