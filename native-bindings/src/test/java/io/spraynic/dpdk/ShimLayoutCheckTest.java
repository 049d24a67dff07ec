package io.spraynic.dpdk;

import io.spraynic.dpdk.generated.Dpdk;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The start-up layout check, against the real shim and against a shim that disagrees.
 */
class ShimLayoutCheckTest
{
    @Test
    void shouldFindNoMismatchWithInstalledDpdk()
    {
        NativeLibrary.load();
        assertEquals(List.of(), ShimLayoutCheck.mismatches(Dpdk::spraynic_layout_probe));
    }

    @Test
    void shouldNameEveryDifferingLayoutAndTheFix()
    {
        NativeLibrary.load();
        final int dataLenProbe = Dpdk.SPRAYNIC_PROBE_MBUF_DATA_LEN();
        final List<String> mismatches = ShimLayoutCheck.mismatches(
            probe -> probe == dataLenProbe ? 48 : Dpdk.spraynic_layout_probe(probe));
        assertEquals(List.of(
            "rte_mbuf.data_len is 48 in C but 40 in Java",
            "Mbuf.DATA_LEN_OFFSET is 48 in C but 40 in Java"), mismatches);
        final String message = ShimLayoutCheck.describe(mismatches);
        assertTrue(message.contains("regenerate them with native-bindings/jextract/regenerate.sh"), message);
    }

    @Test
    void shouldExplainMissingDpdkInOneSentence()
    {
        final String message = NativeLibrary.explainLinkError(Path.of("/tmp/libspraynic_shim.so"),
            new UnsatisfiedLinkError("/tmp/libspraynic_shim.so: librte_ethdev.so.23: cannot open shared object file"));
        assertEquals("DPDK's runtime libraries are not installed (/tmp/libspraynic_shim.so: librte_ethdev.so.23: " +
            "cannot open shared object file); install them with: apt-get install -y dpdk", message);
    }
}
