/**
 * Control-path configuration for SprayNIC's DPDK datapath: a TOML model from which the EAL argument
 * vector and the port, queue and mempool settings are derived.
 * <p>
 * Start at {@link io.spraynic.pmd.PmdConfigs} to load a preset or a file, {@link io.spraynic.pmd.NicConfig}
 * for the model and {@link io.spraynic.pmd.NicConfig#ealArguments()} for the argv of {@code rte_eal_init}.
 * Every bad value fails with a {@link io.spraynic.pmd.ConfigException} that names its key, the value and
 * what is allowed.
 */
package io.spraynic.pmd;
