package main

import (
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
)

// Configuration from files only (--config=file:...).
func resolverSettings() confmap.ResolverSettings {
	return confmap.ResolverSettings{
		ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory()},
		DefaultScheme:     "file",
	}
}
