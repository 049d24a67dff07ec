package io.spraynic.dpdk;

import io.spraynic.dpdk.generated.Dpdk;
import io.spraynic.dpdk.generated.rte_eth_conf;
import io.spraynic.dpdk.generated.rte_eth_rxmode;
import io.spraynic.dpdk.generated.rte_eth_desc_lim;
import io.spraynic.dpdk.generated.rte_eth_dev_info;
import io.spraynic.dpdk.generated.rte_eth_stats;
import io.spraynic.dpdk.generated.rte_eth_xstat;
import io.spraynic.dpdk.generated.rte_eth_xstat_name;
import io.spraynic.dpdk.generated.rte_ether_addr;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * An ethdev port: the control path (configure, queues, MTU, start/stop, MAC, link, stats and
 * xstats). Every failure is a {@link DpdkException} naming the call and carrying DPDK's message.
 * The fast path does not go through this class: it is {@link MbufBurst#receive(int, int)} and
 * {@link MbufBurst#transmit(int, int)} on the port and queue ids.
 */
public final class EthPort implements AutoCloseable
{
    private final int portId;
    private final String name;
    private boolean started;
    private boolean closed;

    private EthPort(final int portId, final String name)
    {
        this.portId = portId;
        this.name = name;
    }

    /**
     * @param name the device name, e.g. {@code net_null0} or {@code net_ring_a}.
     * @return the port of that device.
     */
    public static EthPort byName(final String name)
    {
        Eal.current();
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment portId = arena.allocate(ValueLayout.JAVA_SHORT);
            final int rc = Dpdk.rte_eth_dev_get_port_by_name(arena.allocateFrom(name), portId);
            if (rc != 0)
            {
                throw new DpdkException("rte_eth_dev_get_port_by_name(" + name + ")", Math.abs(rc),
                    "no port of that name (" + Eal.strerror(Math.abs(rc)) + "); " + availablePorts());
            }
            return new EthPort(Short.toUnsignedInt(portId.get(ValueLayout.JAVA_SHORT, 0)), name);
        }
    }

    /**
     * @return the port with this id.
     */
    public static EthPort byId(final int portId)
    {
        Eal.current();
        if (0 == Dpdk.rte_eth_dev_is_valid_port((short)portId))
        {
            throw new DpdkException("rte_eth_dev_is_valid_port(" + portId + ")", "no such port; " + availablePorts());
        }
        return new EthPort(portId, nameOf(portId));
    }

    /**
     * @return the number of ports DPDK has probed.
     */
    public static int count()
    {
        return Short.toUnsignedInt(Dpdk.rte_eth_dev_count_avail());
    }

    private static String availablePorts()
    {
        final StringBuilder names = new StringBuilder("ports present:");
        int found = 0;
        for (int id = 0; id < Dpdk.RTE_MAX_ETHPORTS(); id++)
        {
            if (0 != Dpdk.rte_eth_dev_is_valid_port((short)id))
            {
                names.append(' ').append(nameOf(id));
                found++;
            }
        }
        return found == 0 ? "no ports present (add a --vdev or create one)" : names.toString();
    }

    private static String nameOf(final int portId)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment buffer = arena.allocate(Dpdk.RTE_ETH_NAME_MAX_LEN());
            final int rc = Dpdk.rte_eth_dev_get_name_by_port((short)portId, buffer);
            return rc == 0 ? buffer.getString(0) : "port" + portId;
        }
    }

    public int portId()
    {
        return portId;
    }

    public String name()
    {
        return name;
    }

    /**
     * @return what the driver reports about the device.
     */
    public DeviceInfo info()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment info = rte_eth_dev_info.allocate(arena);
            check("rte_eth_dev_info_get", Dpdk.rte_eth_dev_info_get((short)portId, info));
            final MemorySegment driver = rte_eth_dev_info.driver_name(info);
            final MemorySegment rxLim = rte_eth_dev_info.rx_desc_lim(info);
            final MemorySegment txLim = rte_eth_dev_info.tx_desc_lim(info);
            return new DeviceInfo(
                MemorySegment.NULL.equals(driver) ? "" : driver.reinterpret(256).getString(0),
                Short.toUnsignedInt(rte_eth_dev_info.max_rx_queues(info)),
                Short.toUnsignedInt(rte_eth_dev_info.max_tx_queues(info)),
                Short.toUnsignedInt(rte_eth_dev_info.min_mtu(info)),
                Short.toUnsignedInt(rte_eth_dev_info.max_mtu(info)),
                Short.toUnsignedInt(rte_eth_desc_lim.nb_min(rxLim)),
                Short.toUnsignedInt(rte_eth_desc_lim.nb_max(rxLim)),
                Short.toUnsignedInt(rte_eth_desc_lim.nb_min(txLim)),
                Short.toUnsignedInt(rte_eth_desc_lim.nb_max(txLim)));
        }
    }

    /**
     * Configures the number of queues with the default device configuration (no offloads, no RSS).
     */
    public void configure(final int rxQueues, final int txQueues)
    {
        configure(rxQueues, txQueues, 0);
    }

    /**
     * Configures the number of queues and the MTU ({@code rxmode.mtu}): ethdev checks it against what the driver
     * reports and takes it without the driver's {@code mtu_set}, which some drivers (net_ring) lack.
     *
     * @param mtu the MTU, or 0 for ethdev's default of 1500.
     */
    public void configure(final int rxQueues, final int txQueues, final int mtu)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment conf = rte_eth_conf.allocate(arena).fill((byte)0);
            rte_eth_rxmode.mtu(rte_eth_conf.rxmode(conf), mtu);
            check("rte_eth_dev_configure(rx=" + rxQueues + ", tx=" + txQueues + (mtu == 0 ? "" : ", mtu=" + mtu) + ")",
                Dpdk.rte_eth_dev_configure((short)portId, (short)rxQueues, (short)txQueues, conf));
        }
    }

    /**
     * Sets up RX queue {@code queueId}, whose buffers come from {@code pool}.
     */
    public void setupRxQueue(final int queueId, final int descriptors, final Mempool pool)
    {
        check("rte_eth_rx_queue_setup(queue=" + queueId + ", descriptors=" + descriptors + ")",
            Dpdk.rte_eth_rx_queue_setup((short)portId, (short)queueId, (short)descriptors, socketId(),
                MemorySegment.NULL, pool.segment()));
    }

    /**
     * Sets up TX queue {@code queueId}.
     */
    public void setupTxQueue(final int queueId, final int descriptors)
    {
        check("rte_eth_tx_queue_setup(queue=" + queueId + ", descriptors=" + descriptors + ")",
            Dpdk.rte_eth_tx_queue_setup((short)portId, (short)queueId, (short)descriptors, socketId(),
                MemorySegment.NULL));
    }

    /**
     * @return the NUMA socket of the device, or {@code SOCKET_ID_ANY}.
     */
    public int socketId()
    {
        return Dpdk.rte_eth_dev_socket_id((short)portId);
    }

    public void start()
    {
        check("rte_eth_dev_start", Dpdk.rte_eth_dev_start((short)portId));
        started = true;
    }

    public void stop()
    {
        if (started)
        {
            started = false;
            check("rte_eth_dev_stop", Dpdk.rte_eth_dev_stop((short)portId));
        }
    }

    public boolean isStarted()
    {
        return started;
    }

    public void mtu(final int mtu)
    {
        check("rte_eth_dev_set_mtu(" + mtu + ")", Dpdk.rte_eth_dev_set_mtu((short)portId, (short)mtu));
    }

    public int mtu()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment mtu = arena.allocate(ValueLayout.JAVA_SHORT);
            check("rte_eth_dev_get_mtu", Dpdk.rte_eth_dev_get_mtu((short)portId, mtu));
            return Short.toUnsignedInt(mtu.get(ValueLayout.JAVA_SHORT, 0));
        }
    }

    /**
     * @return the port's MAC address, 6 bytes.
     */
    public byte[] macAddress()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment address = rte_ether_addr.allocate(arena);
            check("rte_eth_macaddr_get", Dpdk.rte_eth_macaddr_get((short)portId, address));
            return address.toArray(ValueLayout.JAVA_BYTE);
        }
    }

    /**
     * @return the MAC address as {@code aa:bb:cc:dd:ee:ff}.
     */
    public String macAddressText()
    {
        final byte[] mac = macAddress();
        final StringBuilder text = new StringBuilder(17);
        for (int i = 0; i < mac.length; i++)
        {
            if (i > 0)
            {
                text.append(':');
            }
            text.append(Character.forDigit((mac[i] >> 4) & 0xF, 16)).append(Character.forDigit(mac[i] & 0xF, 16));
        }
        return text.toString();
    }

    /**
     * Sets the port's own (default) MAC address, {@code rte_eth_dev_default_mac_addr_set}: the source of what it
     * sends and, on drivers with a filter, what it receives; {@code net_af_packet} sets its kernel interface's.
     *
     * @param mac the address in the low 48 bits, first byte highest (as the datapath keeps MACs): unicast, not 0.
     * @throws DpdkException when the driver refuses, or cannot set a MAC at all (-ENOTSUP, e.g. {@code net_ring}).
     */
    public void macAddress(final long mac)
    {
        if (null == MacCalls.DEFAULT_MAC_ADDR_SET)
        {
            throw new DpdkException("rte_eth_dev_default_mac_addr_set on port " + portId + " (" + name + ")",
                "not in this DPDK");
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment address = rte_ether_addr.allocate(arena);
            for (int i = 0; i < 6; i++)
            {
                address.set(ValueLayout.JAVA_BYTE, i, (byte)(mac >>> (40 - 8 * i)));
            }
            check("rte_eth_dev_default_mac_addr_set", (int)MacCalls.DEFAULT_MAC_ADDR_SET.invokeExact((short)portId, address));
        }
        catch (final RuntimeException | Error ex)
        {
            throw ex;
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("MAC address of port " + portId + ": " + ex, ex);
        }
    }

    public void promiscuous(final boolean enable)
    {
        final int rc = enable ?
            Dpdk.rte_eth_promiscuous_enable((short)portId) : Dpdk.rte_eth_promiscuous_disable((short)portId);
        if (rc != 0 && rc != -95) // -ENOTSUP: virtual devices without the notion are already promiscuous.
        {
            check("rte_eth_promiscuous_" + (enable ? "enable" : "disable"), rc);
        }
    }

    // not in the jextract symbol filter: looked up once, by hand (control path)
    private static final class MulticastCalls
    {
        static final java.lang.invoke.MethodHandle SET_MC_ADDR_LIST = downcall("rte_eth_dev_set_mc_addr_list",
            java.lang.foreign.FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_SHORT, ValueLayout.ADDRESS,
                ValueLayout.JAVA_INT));
        static final java.lang.invoke.MethodHandle ALLMULTICAST_ENABLE = downcall("rte_eth_allmulticast_enable",
            java.lang.foreign.FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_SHORT));

        private static java.lang.invoke.MethodHandle downcall(final String name,
            final java.lang.foreign.FunctionDescriptor descriptor)
        {
            final java.lang.foreign.Linker linker = java.lang.foreign.Linker.nativeLinker();
            return linker.downcallHandle(java.lang.foreign.SymbolLookup.loaderLookup().or(linker.defaultLookup())
                .findOrThrow(name), descriptor);
        }
    }

    // not in the jextract symbol filter either: looked up once, by hand (control path), on its own, so that a DPDK
    // without it fails this call with a DpdkException, not every use of the class with an initialiser's Error
    private static final class MacCalls
    {
        static final java.lang.invoke.MethodHandle DEFAULT_MAC_ADDR_SET = java.lang.foreign.SymbolLookup.loaderLookup()
            .or(java.lang.foreign.Linker.nativeLinker().defaultLookup()).find("rte_eth_dev_default_mac_addr_set")
            .map(address -> java.lang.foreign.Linker.nativeLinker().downcallHandle(address,
                java.lang.foreign.FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_SHORT, ValueLayout.ADDRESS)))
            .orElse(null);
    }

    /**
     * Lets the port receive frames to these multicast MACs (IPv6 neighbour discovery: the solicited-node and
     * all-nodes groups, 33:33:...): the port's multicast filter when its driver has one, else all multicast; a
     * virtual device with neither already receives every frame.
     *
     * @param macs MACs, each in the low 48 bits.
     * @return how: "filter", "allmulticast" or "everything".
     */
    public String acceptMulticast(final long... macs)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment list = arena.allocate(6L * macs.length, 2);
            for (int i = 0; i < macs.length; i++)
            {
                for (int b = 0; b < 6; b++)
                {
                    list.set(ValueLayout.JAVA_BYTE, 6L * i + b, (byte)(macs[i] >>> (40 - 8 * b)));
                }
            }
            int rc = (int)MulticastCalls.SET_MC_ADDR_LIST.invokeExact((short)portId, list, macs.length);
            if (rc == 0)
            {
                return "filter";
            }
            rc = (int)MulticastCalls.ALLMULTICAST_ENABLE.invokeExact((short)portId);
            if (rc == 0)
            {
                return "allmulticast";
            }
            if (rc != -95) // -ENOTSUP: a virtual device without filters
            {
                check("rte_eth_allmulticast_enable", rc);
            }
            return "everything";
        }
        catch (final RuntimeException | Error ex)
        {
            throw ex;
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("multicast filter of port " + portId + ": " + ex, ex);
        }
    }

    /**
     * @return the link state without waiting for autonegotiation.
     */
    public LinkStatus link()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment fields = arena.allocate(ValueLayout.JAVA_INT, 4);
            final int rc = Dpdk.spraynic_link_get((short)portId, fields, fields.asSlice(4), fields.asSlice(8), fields.asSlice(12));
            check("rte_eth_link_get_nowait", rc);
            return new LinkStatus(fields.getAtIndex(ValueLayout.JAVA_INT, 1) != 0,
                Integer.toUnsignedLong(fields.getAtIndex(ValueLayout.JAVA_INT, 0)),
                fields.getAtIndex(ValueLayout.JAVA_INT, 2) != 0,
                fields.getAtIndex(ValueLayout.JAVA_INT, 3) != 0);
        }
    }

    public PortStats stats()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment stats = rte_eth_stats.allocate(arena);
            check("rte_eth_stats_get", Dpdk.rte_eth_stats_get((short)portId, stats));
            return new PortStats(
                rte_eth_stats.ipackets(stats), rte_eth_stats.opackets(stats),
                rte_eth_stats.ibytes(stats), rte_eth_stats.obytes(stats),
                rte_eth_stats.imissed(stats), rte_eth_stats.ierrors(stats),
                rte_eth_stats.oerrors(stats), rte_eth_stats.rx_nombuf(stats));
        }
    }

    public void resetStats()
    {
        check("rte_eth_stats_reset", Dpdk.rte_eth_stats_reset((short)portId));
    }

    /**
     * @return the driver's extended statistics, by name, in the driver's order.
     */
    public Map<String, Long> xstats()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final int count = Dpdk.rte_eth_xstats_get_names((short)portId, MemorySegment.NULL, 0);
            check("rte_eth_xstats_get_names", Math.min(count, 0));
            final MemorySegment names = rte_eth_xstat_name.allocateArray(count, arena);
            final MemorySegment values = rte_eth_xstat.allocateArray(count, arena);
            final int namesRead = Dpdk.rte_eth_xstats_get_names((short)portId, names, count);
            check("rte_eth_xstats_get_names", Math.min(namesRead, 0));
            final int valuesRead = Dpdk.rte_eth_xstats_get((short)portId, values, count);
            check("rte_eth_xstats_get", Math.min(valuesRead, 0));

            final Map<String, Long> xstats = new LinkedHashMap<>();
            for (int i = 0; i < Math.min(namesRead, valuesRead); i++)
            {
                final MemorySegment xstat = rte_eth_xstat.asSlice(values, i);
                final long id = rte_eth_xstat.id(xstat);
                final String name = rte_eth_xstat_name.name(rte_eth_xstat_name.asSlice(names, id)).getString(0);
                xstats.put(name, rte_eth_xstat.value(xstat));
            }
            return xstats;
        }
    }

    public void resetXstats()
    {
        check("rte_eth_xstats_reset", Dpdk.rte_eth_xstats_reset((short)portId));
    }

    /**
     * Stops (if started) and closes the port, releasing its queues.
     */
    public void close()
    {
        if (!closed)
        {
            stop();
            closed = true;
            check("rte_eth_dev_close", Dpdk.rte_eth_dev_close((short)portId));
        }
    }

    private void check(final String call, final int rc)
    {
        if (rc < 0)
        {
            throw new DpdkException(call + " on port " + portId + " (" + name + ")", -rc, Eal.strerror(-rc));
        }
    }

    public String toString()
    {
        return "EthPort{id=" + portId + ", name=" + name + '}';
    }
}
