// A small OpenTelemetry Collector for nativemem's export tests: the OTLP receiver (profiles
// need the feature gate service.profilesSupport) and a "sink" exporter that appends, per
// request received, one JSON line summarising its profiles to the file named by its `path`:
// resource attributes, each profile's sample type, total, bytes per function and per
// function+file+line (cumulative: each counted once per stack), and the mappings.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/xexporter"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
)

type sinkConfig struct {
	Path string `mapstructure:"path"`
}

type sink struct {
	path string
	mu   sync.Mutex
}

func (s *sink) Start(context.Context, component.Host) error { return nil }
func (s *sink) Shutdown(context.Context) error              { return nil }
func (s *sink) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

type profileSummary struct {
	Type       string           `json:"type"`
	Unit       string           `json:"unit"`
	Total      int64            `json:"total"`
	Samples    int              `json:"samples"`
	Functions  map[string]int64 `json:"functions"`
	Lines      map[string]int64 `json:"lines"`
	PeriodType string           `json:"period_type"`
	Period     int64            `json:"period"`
}

type mappingSummary struct {
	Path  string            `json:"path"`
	Start uint64            `json:"start"`
	Limit uint64            `json:"limit"`
	Attrs map[string]string `json:"attributes"`
}

type requestSummary struct {
	Resource map[string]string `json:"resource"`
	Scope    string            `json:"scope"`
	Profiles []profileSummary  `json:"profiles"`
	Mappings []mappingSummary  `json:"mappings"`
}

func (s *sink) ConsumeProfiles(_ context.Context, pd pprofile.Profiles) error {
	dict := pd.Dictionary()
	str := func(i int32) string {
		if int(i) < dict.StringTable().Len() {
			return dict.StringTable().At(int(i))
		}
		return fmt.Sprintf("<bad string %d>", i)
	}
	var out requestSummary
	for i := 0; i < dict.MappingTable().Len(); i++ {
		m := dict.MappingTable().At(i)
		attrs := map[string]string{}
		for _, a := range m.AttributeIndices().AsRaw() {
			kv := dict.AttributeTable().At(int(a))
			attrs[str(kv.KeyStrindex())] = kv.Value().AsString()
		}
		out.Mappings = append(out.Mappings, mappingSummary{str(m.FilenameStrindex()), m.MemoryStart(), m.MemoryLimit(), attrs})
	}
	rps := pd.ResourceProfiles()
	for r := 0; r < rps.Len(); r++ {
		rp := rps.At(r)
		out.Resource = map[string]string{}
		rp.Resource().Attributes().Range(func(k string, v pcommon.Value) bool {
			out.Resource[k] = v.AsString()
			return true
		})
		sps := rp.ScopeProfiles()
		for sc := 0; sc < sps.Len(); sc++ {
			sp := sps.At(sc)
			out.Scope = sp.Scope().Name() + " " + sp.Scope().Version()
			for p := 0; p < sp.Profiles().Len(); p++ {
				prof := sp.Profiles().At(p)
				summary := profileSummary{
					Type:       str(prof.SampleType().TypeStrindex()),
					Unit:       str(prof.SampleType().UnitStrindex()),
					Functions:  map[string]int64{},
					Lines:      map[string]int64{},
					PeriodType: str(prof.PeriodType().TypeStrindex()),
					Period:     prof.Period(),
				}
				for k := 0; k < prof.Samples().Len(); k++ {
					sample := prof.Samples().At(k)
					var value int64
					for _, v := range sample.Values().AsRaw() {
						value += v
					}
					summary.Total += value
					summary.Samples++
					stack := dict.StackTable().At(int(sample.StackIndex()))
					seenF, seenL := map[string]bool{}, map[string]bool{}
					for _, li := range stack.LocationIndices().AsRaw() {
						loc := dict.LocationTable().At(int(li))
						for l := 0; l < loc.Lines().Len(); l++ {
							line := loc.Lines().At(l)
							fn := dict.FunctionTable().At(int(line.FunctionIndex()))
							name := str(fn.NameStrindex())
							at := fmt.Sprintf("%s %s:%d", name, str(fn.FilenameStrindex()), line.Line())
							if !seenF[name] {
								seenF[name] = true
								summary.Functions[name] += value
							}
							if !seenL[at] {
								seenL[at] = true
								summary.Lines[at] += value
							}
						}
					}
				}
				out.Profiles = append(out.Profiles, summary)
			}
		}
	}
	line, err := json.Marshal(out)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Write(append(line, '\n'))
	return err
}

func sinkFactory() exporter.Factory {
	return xexporter.NewFactory(
		component.MustNewType("sink"),
		func() component.Config { return &sinkConfig{} },
		xexporter.WithProfiles(func(_ context.Context, _ exporter.Settings, cfg component.Config) (xexporter.Profiles, error) {
			return &sink{path: cfg.(*sinkConfig).Path}, nil
		}, component.StabilityLevelDevelopment),
	)
}

func components() (otelcol.Factories, error) {
	receivers, err := otelcol.MakeFactoryMap[receiver.Factory](otlpreceiver.NewFactory())
	if err != nil {
		return otelcol.Factories{}, err
	}
	exporters, err := otelcol.MakeFactoryMap(sinkFactory())
	if err != nil {
		return otelcol.Factories{}, err
	}
	return otelcol.Factories{
		Receivers: receivers,
		Exporters: exporters,
		Telemetry: otelconftelemetry.NewFactory(),
	}, nil
}

func main() {
	info := component.BuildInfo{Command: "otelcol-sink", Description: "nativemem test collector", Version: "0.165.0"}
	settings := otelcol.CollectorSettings{BuildInfo: info, Factories: components}
	settings.ConfigProviderSettings = otelcol.ConfigProviderSettings{ResolverSettings: resolverSettings()}
	if err := otelcol.NewCommand(settings).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
