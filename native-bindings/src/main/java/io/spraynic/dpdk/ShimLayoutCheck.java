package io.spraynic.dpdk;

import io.spraynic.dpdk.generated.Dpdk;
import io.spraynic.dpdk.generated.rte_eth_conf;
import io.spraynic.dpdk.generated.rte_eth_dev_info;
import io.spraynic.dpdk.generated.rte_eth_link;
import io.spraynic.dpdk.generated.rte_eth_stats;
import io.spraynic.dpdk.generated.rte_eth_xstat;
import io.spraynic.dpdk.generated.rte_eth_xstat_name;
import io.spraynic.dpdk.generated.rte_ether_addr;
import io.spraynic.dpdk.generated.rte_mbuf;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntToLongFunction;

/**
 * Start-up check that the DPDK this process loaded has the struct layouts the jextract bindings
 * were generated from. The shim, compiled against the installed headers, reports sizes and
 * offsets; a mismatch (DPDK upgraded without regenerating the bindings) is refused here, with a
 * list of what differs, rather than discovered as corrupt packets.
 */
final class ShimLayoutCheck
{
    /** The shim ABI this Java code was written against. */
    static final int EXPECTED_ABI_VERSION = 1;

    private ShimLayoutCheck()
    {
    }

    static void verify()
    {
        final List<String> mismatches = mismatches(Dpdk::spraynic_layout_probe);
        if (!mismatches.isEmpty())
        {
            throw new IllegalStateException(describe(mismatches));
        }
    }

    static String describe(final List<String> mismatches)
    {
        return "the installed DPDK does not match the jextract bindings (" + String.join("; ", mismatches) +
            "); regenerate them with native-bindings/jextract/regenerate.sh against this DPDK";
    }

    /**
     * @param probe the shim's probe function (a stand-in in tests).
     * @return one line per size or offset that differs between C and Java.
     */
    static List<String> mismatches(final IntToLongFunction probe)
    {
        final List<String> mismatches = new ArrayList<>();
        check(probe, mismatches, "shim ABI version", Dpdk.SPRAYNIC_PROBE_ABI_VERSION(), EXPECTED_ABI_VERSION);
        check(probe, mismatches, "sizeof(rte_mbuf)", Dpdk.SPRAYNIC_PROBE_MBUF_SIZEOF(), rte_mbuf.sizeof());
        check(probe, mismatches, "rte_mbuf.buf_addr", Dpdk.SPRAYNIC_PROBE_MBUF_BUF_ADDR(), rte_mbuf.buf_addr$offset());
        check(probe, mismatches, "rte_mbuf.data_off", Dpdk.SPRAYNIC_PROBE_MBUF_DATA_OFF(), rte_mbuf.data_off$offset());
        check(probe, mismatches, "rte_mbuf.refcnt", Dpdk.SPRAYNIC_PROBE_MBUF_REFCNT(), rte_mbuf.refcnt$offset());
        check(probe, mismatches, "rte_mbuf.nb_segs", Dpdk.SPRAYNIC_PROBE_MBUF_NB_SEGS(), rte_mbuf.nb_segs$offset());
        check(probe, mismatches, "rte_mbuf.port", Dpdk.SPRAYNIC_PROBE_MBUF_PORT(), rte_mbuf.port$offset());
        check(probe, mismatches, "rte_mbuf.ol_flags", Dpdk.SPRAYNIC_PROBE_MBUF_OL_FLAGS(), rte_mbuf.ol_flags$offset());
        check(probe, mismatches, "rte_mbuf.packet_type", Dpdk.SPRAYNIC_PROBE_MBUF_PACKET_TYPE(), rte_mbuf.packet_type$offset());
        check(probe, mismatches, "rte_mbuf.pkt_len", Dpdk.SPRAYNIC_PROBE_MBUF_PKT_LEN(), rte_mbuf.pkt_len$offset());
        check(probe, mismatches, "rte_mbuf.data_len", Dpdk.SPRAYNIC_PROBE_MBUF_DATA_LEN(), rte_mbuf.data_len$offset());
        check(probe, mismatches, "rte_mbuf.vlan_tci", Dpdk.SPRAYNIC_PROBE_MBUF_VLAN_TCI(), rte_mbuf.vlan_tci$offset());
        check(probe, mismatches, "rte_mbuf.buf_len", Dpdk.SPRAYNIC_PROBE_MBUF_BUF_LEN(), rte_mbuf.buf_len$offset());
        check(probe, mismatches, "rte_mbuf.pool", Dpdk.SPRAYNIC_PROBE_MBUF_POOL(), rte_mbuf.pool$offset());
        check(probe, mismatches, "rte_mbuf.next", Dpdk.SPRAYNIC_PROBE_MBUF_NEXT(), rte_mbuf.next$offset());
        check(probe, mismatches, "RTE_PKTMBUF_HEADROOM", Dpdk.SPRAYNIC_PROBE_PKTMBUF_HEADROOM(), Dpdk.RTE_PKTMBUF_HEADROOM());
        check(probe, mismatches, "sizeof(rte_eth_stats)", Dpdk.SPRAYNIC_PROBE_ETH_STATS_SIZEOF(), rte_eth_stats.sizeof());
        check(probe, mismatches, "sizeof(rte_eth_dev_info)", Dpdk.SPRAYNIC_PROBE_ETH_DEV_INFO_SIZEOF(), rte_eth_dev_info.sizeof());
        check(probe, mismatches, "sizeof(rte_eth_conf)", Dpdk.SPRAYNIC_PROBE_ETH_CONF_SIZEOF(), rte_eth_conf.sizeof());
        check(probe, mismatches, "sizeof(rte_eth_link)", Dpdk.SPRAYNIC_PROBE_ETH_LINK_SIZEOF(), rte_eth_link.sizeof());
        check(probe, mismatches, "sizeof(rte_eth_xstat)", Dpdk.SPRAYNIC_PROBE_ETH_XSTAT_SIZEOF(), rte_eth_xstat.sizeof());
        check(probe, mismatches, "sizeof(rte_eth_xstat_name)", Dpdk.SPRAYNIC_PROBE_ETH_XSTAT_NAME_SIZEOF(), rte_eth_xstat_name.sizeof());
        check(probe, mismatches, "sizeof(rte_ether_addr)", Dpdk.SPRAYNIC_PROBE_ETHER_ADDR_SIZEOF(), rte_ether_addr.sizeof());
        check(probe, mismatches, "RTE_MAX_ETHPORTS", Dpdk.SPRAYNIC_PROBE_MAX_ETHPORTS(), Dpdk.RTE_MAX_ETHPORTS());
        check(probe, mismatches, "Mbuf.DATA_OFF_OFFSET", Dpdk.SPRAYNIC_PROBE_MBUF_DATA_OFF(), Mbuf.DATA_OFF_OFFSET);
        check(probe, mismatches, "Mbuf.REFCNT_OFFSET", Dpdk.SPRAYNIC_PROBE_MBUF_REFCNT(), Mbuf.REFCNT_OFFSET);
        check(probe, mismatches, "Mbuf.DATA_LEN_OFFSET", Dpdk.SPRAYNIC_PROBE_MBUF_DATA_LEN(), Mbuf.DATA_LEN_OFFSET);
        check(probe, mismatches, "Mbuf.PKT_LEN_OFFSET", Dpdk.SPRAYNIC_PROBE_MBUF_PKT_LEN(), Mbuf.PKT_LEN_OFFSET);
        check(probe, mismatches, "Mbuf.BUF_ADDR_OFFSET", Dpdk.SPRAYNIC_PROBE_MBUF_BUF_ADDR(), Mbuf.BUF_ADDR_OFFSET);
        check(probe, mismatches, "Mbuf.BUF_LEN_OFFSET", Dpdk.SPRAYNIC_PROBE_MBUF_BUF_LEN(), Mbuf.BUF_LEN_OFFSET);
        check(probe, mismatches, "Mbuf.NB_SEGS_OFFSET", Dpdk.SPRAYNIC_PROBE_MBUF_NB_SEGS(), Mbuf.NB_SEGS_OFFSET);
        check(probe, mismatches, "Mbuf.PORT_OFFSET", Dpdk.SPRAYNIC_PROBE_MBUF_PORT(), Mbuf.PORT_OFFSET);
        check(probe, mismatches, "Mbuf.OL_FLAGS_OFFSET", Dpdk.SPRAYNIC_PROBE_MBUF_OL_FLAGS(), Mbuf.OL_FLAGS_OFFSET);
        check(probe, mismatches, "Mbuf.LENGTH", Dpdk.SPRAYNIC_PROBE_MBUF_SIZEOF(), Mbuf.LENGTH);
        return mismatches;
    }

    private static void check(
        final IntToLongFunction probe, final List<String> mismatches, final String what, final int probeId, final long expected)
    {
        final long actual = probe.applyAsLong(probeId);
        if (actual != expected)
        {
            mismatches.add(what + " is " + actual + " in C but " + expected + " in Java");
        }
    }
}
