package dev.nativemem.micrometer.autoconfigure;

import dev.nativemem.NativeMemory;
import dev.nativemem.micrometer.NativeMemoryMeterBinder;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * Spring Boot registers nativemem's gauges with every meter registry (Actuator binds each {@link
 * io.micrometer.core.instrument.binder.MeterBinder} bean) when Micrometer and nativemem are on the
 * class path; {@code nativemem.metrics.enabled=false} turns it off, and a {@link
 * NativeMemoryMeterBinder} bean of the application's own replaces this one.
 */
@AutoConfiguration
@ConditionalOnClass({MeterRegistry.class, NativeMemory.class})
@ConditionalOnProperty(
    prefix = "nativemem.metrics",
    name = "enabled",
    havingValue = "true",
    matchIfMissing = true)
public class NativeMemoryMetricsAutoConfiguration {
  @Bean
  @ConditionalOnMissingBean
  public NativeMemoryMeterBinder nativeMemoryMeterBinder() {
    return new NativeMemoryMeterBinder();
  }
}
