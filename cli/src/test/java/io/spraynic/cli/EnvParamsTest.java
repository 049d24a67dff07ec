package io.spraynic.cli;

import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class EnvParamsTest
{
    private static final Map<String, String> ENV = Map.of(
        "PCIDEVICE_INTEL_COM_SPRAYNIC_PLANE0", "0000:3b:02.1",
        "PCIDEVICE_INTEL_COM_SPRAYNIC_PLANE1", "0000:3b:0a.3,0000:3b:0a.4",
        "BLANK", " ");

    @Test
    void shouldFillParametersFromTheDevicePluginsVariables()
    {
        final Map<String, String> params = new LinkedHashMap<>(Map.of("memory_mb", "512"));
        final Map<String, String> resolved = EnvParams.resolve(Map.of("plane0_pci", "PCIDEVICE_INTEL_COM_SPRAYNIC_PLANE0"),
            params, ENV::get);
        assertEquals(Map.of("memory_mb", "512", "plane0_pci", "0000:3b:02.1"), resolved);
        assertEquals(Map.of("memory_mb", "512"), params, "the -p parameters are left as given");
        assertEquals(params, EnvParams.resolve(Map.of(), params, ENV::get));
    }

    @Test
    void shouldRefuseAMissingVariableSeveralDevicesAndAParameterGivenTwice()
    {
        assertRefused(Map.of("plane0_pci", "PCIDEVICE_INTEL_COM_OTHER"), Map.of(), "is not set (the device plugin");
        assertRefused(Map.of("plane0_pci", "BLANK"), Map.of(), "BLANK is not set");
        assertRefused(Map.of("plane1_pci", "PCIDEVICE_INTEL_COM_SPRAYNIC_PLANE1"), Map.of(), "lists several devices");
        assertRefused(Map.of("plane0_pci", "PCIDEVICE_INTEL_COM_SPRAYNIC_PLANE0"), Map.of("plane0_pci", "0000:00:01.0"),
            "also given with -p");
    }

    private static void assertRefused(final Map<String, String> fromEnv, final Map<String, String> params, final String reason)
    {
        final BadOption refused = assertThrows(BadOption.class, () -> EnvParams.resolve(fromEnv, params, ENV::get));
        assertTrue(refused.getMessage().startsWith("--param-from-env "), refused.getMessage());
        assertTrue(refused.getMessage().contains(reason), refused.getMessage());
    }
}
