package io.spraynic.datapath.neighbour;

import io.spraynic.datapath.transport.FrameSink;
import io.spraynic.datapath.transport.TokenBucket;
import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.wire.ArpHeader;
import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.IcmpHeader;
import io.spraynic.datapath.wire.Ipv4Header;
import io.spraynic.datapath.wire.Wire;
import io.spraynic.pmd.InterfaceAddress;

import java.lang.foreign.MemorySegment;

/**
 * The control path of one plane's neighbours: answers ARP requests and ICMP echo requests for the plane's own
 * IPv4 address, or on an IPv6 plane neighbour solicitations and ICMPv6 echo requests ({@link NeighbourDiscovery});
 * resolves next hops with ARP or neighbour solicitations (a {@link NeighbourCache} with retries, time-outs and a
 * bounded size, one state machine for both families), announces the address with a gratuitous ARP or an
 * unsolicited neighbour advertisement when it starts, and tells a {@link Listener} whenever a next hop gets a MAC
 * or a new one, so the connections sending to it follow. Addresses are 128 bits throughout, IPv4 ones in their
 * IPv4-mapped form ({@link InterfaceAddress#mappedLow}); the {@code int} methods are the IPv4 plane's shorthand. Runs on one worker's thread; frames
 * reach it only after the RX path found them not RoCEv2 (one branch on the fast path), replies leave through its
 * own {@link FrameSink}. Nothing allocates per frame.
 * <p>
 * Every frame is hostile: lengths, hardware and protocol types, lengths of addresses and opcodes are checked;
 * it answers only for its own address, never from or to a multicast or zero MAC, at most
 * {@link NeighbourConfig#repliesPerSecond()} ARP replies or neighbour advertisements a second and as many echo replies,
 * each from a bucket of its own (an echo flood from anywhere cannot starve resolution); a reply is taken only for an address it asked for
 * (an entry INCOMPLETE or STALE), so an unsolicited reply never makes or changes an entry. Requests never make an
 * entry either (a flood of requests from random addresses cannot fill the table): a request for our address, or a
 * gratuitous ARP, updates the MAC of an entry that already exists, as a host that moved or changed its NIC
 * announces itself; an attacker on the same link can do that, as with any ARP. Every drop is counted by reason
 * ({@link NeighbourCounters}). Frames with a VLAN tag are not neighbour traffic of an untagged plane and are left
 * alone.
 */
public final class NeighbourAgent
{
    /** Told when a next hop has a MAC, a first or a new one (on the agent's thread). */
    @FunctionalInterface
    public interface Listener
    {
        /** @param high the next hop's first 64 bits. @param low its last 64 bits (IPv4-mapped for IPv4). */
        void onNextHop(int plane, long high, long low, long mac);
    }

    /** ff:ff:ff:ff:ff:ff. */
    public static final long BROADCAST_MAC = 0xFFFF_FFFF_FFFFL;
    private static final int ARP_FRAME_LENGTH = EthernetHeader.LENGTH + ArpHeader.LENGTH;
    private static final int ECHO_TTL = 64;
    /**
     * MAC changes of known entries a plane takes a second, in bursts of {@link #MAC_CHANGE_BURST}: a host moves or
     * changes its NIC now and then, while a flood of gratuitous ARPs or override advertisements that flips a next
     * hop's MAC would make every worker update its connections for each; one over the rate is refused (the entry keeps
     * its MAC) and counted.
     */
    public static final int MAC_CHANGES_PER_SECOND = 100;
    public static final int MAC_CHANGE_BURST = 32;

    private final int plane;
    private final InterfaceAddress address;
    private final int localIpv4;
    private final long localMac;
    private final NeighbourDiscovery discovery;
    private final FrameSink sink;
    private final NeighbourConfig config;
    private final NeighbourCache cache;
    private final TransportCounters counters = NeighbourCounters.create();
    private final Listener listener;
    // two buckets: an echo flood (which anyone who can route to the address can send) must not starve the answers
    // that keep the plane's neighbours resolving us
    private final TokenBucket neighbourReplies;
    /**
     * Replies to neighbours this agent holds with the MAC they ask from: a flood of requests from strangers empties
     * {@link #neighbourReplies}, and the peers whose traffic flows must still be answered, or their entries for us
     * fail and their traffic stops.
     */
    private final TokenBucket knownNeighbourReplies;
    private final TokenBucket echoReplies;
    private final TokenBucket macChanges = new TokenBucket(MAC_CHANGES_PER_SECOND, MAC_CHANGE_BURST);
    private long nextTimerNanos = Long.MAX_VALUE;
    private int ipIdentification;

    /**
     * @param plane    the plane (for the listener).
     * @param address  the plane's address, prefix and gateway.
     * @param localMac the port's MAC.
     * @param sink     where its frames go (flushed by the caller).
     * @param config   sizes, timers, rates.
     * @param listener told of next hops' MACs.
     */
    public NeighbourAgent(final int plane, final InterfaceAddress address, final long localMac, final FrameSink sink,
        final NeighbourConfig config, final Listener listener)
    {
        this.plane = plane;
        this.address = address;
        this.localIpv4 = address.ipv4();
        this.localMac = localMac;
        this.sink = sink;
        this.config = config;
        this.cache = new NeighbourCache(config.capacity());
        this.listener = listener;
        this.neighbourReplies = new TokenBucket(config.repliesPerSecond(), config.replyBurst());
        this.knownNeighbourReplies = new TokenBucket(config.repliesPerSecond(), config.replyBurst());
        this.echoReplies = new TokenBucket(config.repliesPerSecond(), config.replyBurst());
        this.discovery = address.isIpv6() ? new NeighbourDiscovery(this, address, localMac, sink, counters) : null;
    }

    /** @return the plane's address, prefix and gateway. */
    public InterfaceAddress address()
    {
        return address;
    }

    /** @return the counters (plain longs, this thread). */
    public TransportCounters counters()
    {
        return counters;
    }

    /**
     * Tells {@code listener} of every next hop that has a MAC now (this thread): a worker that missed an update gets
     * them all again. @return how many.
     */
    public int forEachNextHop(final Listener listener)
    {
        int told = 0;
        for (int slot = 0, n = cache.capacity(); slot < n; slot++)
        {
            final int state = cache.state(slot);
            if (state != NeighbourCache.FREE && cache.hasMac(slot))
            {
                listener.onNextHop(plane, cache.addressHigh(slot), cache.addressLow(slot), cache.mac(slot));
                told++;
            }
        }
        return told;
    }

    /** @return the table (tests and reports, this thread). */
    public NeighbourCache cache()
    {
        return cache;
    }

    /**
     * Announces the plane's address: one gratuitous ARP (a request for itself, to broadcast), or on an IPv6 plane
     * one unsolicited neighbour advertisement to all nodes.
     */
    public void start(final long nowNanos)
    {
        if (null != discovery)
        {
            discovery.advertise();
        }
        else if (writeArp(ArpHeader.OPERATION_REQUEST, BROADCAST_MAC, localIpv4, 0, localIpv4))
        {
            counters.increment(NeighbourCounters.GRATUITOUS_SENT);
        }
    }

    /**
     * @param destination a peer's address on this plane.
     * @return the address whose MAC frames to it go to (the peer on-link, else the gateway), 0 when unreachable.
     */
    public int nextHop(final int destination)
    {
        return address.nextHop(destination);
    }

    /** Adds an entry that is never asked for and never expires (an emulated fabric without ARP, static config). */
    public void addPermanent(final int ipv4, final long mac, final long nowNanos)
    {
        addPermanent(InterfaceAddress.MAPPED_HIGH, InterfaceAddress.mappedLow(ipv4), mac, nowNanos);
    }

    /** Adds an entry for {@code high:low} (128 bits) that is never asked for and never expires. */
    public void addPermanent(final long high, final long low, final long mac, final long nowNanos)
    {
        int slot = cache.slot(high, low);
        if (slot == NeighbourCache.NONE)
        {
            slot = cache.create(high, low, NeighbourCache.PERMANENT, nowNanos);
            if (slot == NeighbourCache.NONE)
            {
                throw new IllegalStateException("the neighbour table of plane " + plane + " is full of permanent entries");
            }
        }
        cache.set(slot, NeighbourCache.PERMANENT, mac, Long.MAX_VALUE, 0);
    }

    /**
     * The MAC of a next hop, asking for it when it has none: the first call for an unknown address sends an ARP
     * request and returns 0; later calls return 0 until the answer came ({@link #state} says whether it failed).
     *
     * @return the MAC, or 0 while unresolved or failed.
     */
    public long resolve(final int ipv4, final long nowNanos)
    {
        return resolve(InterfaceAddress.MAPPED_HIGH, InterfaceAddress.mappedLow(ipv4), nowNanos);
    }

    /** {@link #resolve(int, long)} for a 128-bit address (IPv4-mapped on an IPv4 plane). */
    public long resolve(final long high, final long low, final long nowNanos)
    {
        int slot = cache.slot(high, low);
        if (slot != NeighbourCache.NONE)
        {
            cache.touch(slot, nowNanos);
            if (cache.hasMac(slot))
            {
                counters.increment(NeighbourCounters.CACHE_HITS);
                return cache.mac(slot);
            }
            counters.increment(NeighbourCounters.CACHE_MISSES);
            return 0; // INCOMPLETE (asked) or FAILED (held down)
        }
        counters.increment(NeighbourCounters.CACHE_MISSES);
        slot = cache.create(high, low, NeighbourCache.INCOMPLETE, nowNanos);
        if (slot == NeighbourCache.NONE)
        {
            counters.increment(NeighbourCounters.CACHE_FULL);
            return 0;
        }
        if (cache.evicted())
        {
            counters.increment(NeighbourCounters.EVICTIONS);
        }
        sendRequest(high, low, 0);
        schedule(slot, NeighbourCache.INCOMPLETE, 0, nowNanos + config.retransmitNanos(), config.tries() - 1);
        return 0;
    }

    /**
     * A connection sends to {@code high:low} from now on: its entry is made (and asked) if it has none, is not evicted
     * while followed, and when it fails it is asked again after each hold-down instead of being forgotten, so that a
     * next hop that comes back, with its old MAC or a new one, reaches the connections that follow it (the listener
     * is told when it answers).
     *
     * @return false, counted, when it is not followed: the table is full, or half of it is followed already (the
     * connection still sends to the MAC it has; the entry is only not kept for it).
     */
    public boolean follow(final long high, final long low, final long nowNanos)
    {
        if (cache.slot(high, low) == NeighbourCache.NONE)
        {
            resolve(high, low, nowNanos);
        }
        final int slot = cache.slot(high, low);
        if (slot != NeighbourCache.NONE && cache.follow(slot))
        {
            return true;
        }
        counters.increment(NeighbourCounters.FOLLOWS_REFUSED);
        return false;
    }

    /** A connection that followed {@code high:low} no longer sends to it. */
    public void unfollow(final long high, final long low)
    {
        final int slot = cache.slot(high, low);
        if (slot != NeighbourCache.NONE)
        {
            cache.unfollow(slot);
        }
    }

    /** @return connections following {@code high:low}'s entry, 0 when it has none. */
    public int followers(final long high, final long low)
    {
        final int slot = cache.slot(high, low);
        return slot == NeighbourCache.NONE ? 0 : cache.followers(slot);
    }

    /** @return the state of {@code ipv4}'s entry ({@link NeighbourCache} constants), FREE when it has none. */
    public int state(final int ipv4)
    {
        return state(InterfaceAddress.MAPPED_HIGH, InterfaceAddress.mappedLow(ipv4));
    }

    /** @return the state of {@code high:low}'s entry, FREE when it has none. */
    public int state(final long high, final long low)
    {
        final int slot = cache.slot(high, low);
        return slot == NeighbourCache.NONE ? NeighbourCache.FREE : cache.state(slot);
    }

    /** @return {@code ipv4}'s MAC when it has one, else 0 (no request, no counting). */
    public long macOf(final int ipv4)
    {
        return macOf(InterfaceAddress.MAPPED_HIGH, InterfaceAddress.mappedLow(ipv4));
    }

    /** @return {@code high:low}'s MAC when it has one, else 0 (no request, no counting). */
    public long macOf(final long high, final long low)
    {
        final int slot = cache.slot(high, low);
        return slot == NeighbourCache.NONE || !cache.hasMac(slot) ? 0 : cache.mac(slot);
    }

    /**
     * Runs the timers: retries, time-outs, REACHABLE to STALE (asked again), FAILED forgotten after the hold-down.
     * Cheap until the earliest deadline.
     *
     * @return work done.
     */
    public int onTick(final long nowNanos)
    {
        if (nowNanos < nextTimerNanos)
        {
            return 0;
        }
        int work = 0;
        long next = Long.MAX_VALUE;
        for (int slot = 0, n = cache.capacity(); slot < n; slot++)
        {
            final int state = cache.state(slot);
            if (state == NeighbourCache.FREE || state == NeighbourCache.PERMANENT)
            {
                continue;
            }
            if (cache.deadline(slot) <= nowNanos)
            {
                work++;
                expire(slot, state, nowNanos);
            }
            if (cache.state(slot) != NeighbourCache.FREE)
            {
                next = Math.min(next, cache.deadline(slot));
            }
        }
        nextTimerNanos = next;
        return work;
    }

    private void expire(final int slot, final int state, final long nowNanos)
    {
        final long high = cache.addressHigh(slot);
        final long low = cache.addressLow(slot);
        final long mac = cache.mac(slot);
        switch (state)
        {
            case NeighbourCache.REACHABLE ->
            {
                // still used with its MAC while asked again, directly (RFC 4861's PROBE, Linux's unicast probes)
                sendRequest(high, low, mac);
                cache.set(slot, NeighbourCache.STALE, mac, nowNanos + config.retransmitNanos(), config.tries() - 1);
            }
            case NeighbourCache.INCOMPLETE, NeighbourCache.STALE ->
            {
                final int tries = cache.triesLeft(slot);
                if (tries > 0)
                {
                    sendRequest(high, low, state == NeighbourCache.STALE ? mac : 0);
                    cache.set(slot, state, mac, nowNanos + config.retransmitNanos(), tries - 1);
                }
                else
                {
                    counters.increment(NeighbourCounters.FAILURES);
                    cache.set(slot, NeighbourCache.FAILED, 0, nowNanos + config.holdDownNanos(), 0);
                }
            }
            default ->
            {
                if (cache.followers(slot) > 0)
                {
                    // FAILED, the hold-down over, and connections still send to it: asked again, as a new entry is
                    sendRequest(high, low, 0);
                    cache.set(slot, NeighbourCache.INCOMPLETE, 0, nowNanos + config.retransmitNanos(), config.tries() - 1);
                    counters.increment(NeighbourCounters.FOLLOWED_ASKED_AGAIN);
                }
                else
                {
                    cache.remove(slot); // FAILED: the hold-down is over, the next resolve asks again
                }
            }
        }
    }

    private void schedule(final int slot, final int state, final long mac, final long deadline, final int tries)
    {
        cache.set(slot, state, mac, deadline, tries);
        if (deadline < nextTimerNanos)
        {
            nextTimerNanos = deadline;
        }
    }

    /**
     * Takes a frame the RX path found not RoCEv2: on an IPv4 plane an ARP packet or an ICMP message, on an IPv6
     * plane an ICMPv6 message (neighbour discovery, echo) is handled, anything else ignored.
     *
     * @param s      memory of the frame.
     * @param o      offset of its first byte.
     * @param length its length.
     * @return true when it was ARP, ICMP or ICMPv6 (handled or dropped with a count).
     */
    public boolean onFrame(final MemorySegment s, final long o, final int length, final long nowNanos)
    {
        if (length < EthernetHeader.LENGTH)
        {
            return false;
        }
        final int etherType = EthernetHeader.etherType(s, o);
        if (null != discovery)
        {
            return etherType == EthernetHeader.ETHER_TYPE_IPV6 && discovery.onFrame(s, o, length, nowNanos);
        }
        if (etherType == ArpHeader.ETHER_TYPE_ARP)
        {
            onArp(s, o, length, nowNanos);
            return true;
        }
        if (etherType == EthernetHeader.ETHER_TYPE_IPV4 && length >= EthernetHeader.LENGTH + Ipv4Header.LENGTH &&
            Ipv4Header.protocol(s, o + EthernetHeader.LENGTH) == IcmpHeader.PROTOCOL_ICMP)
        {
            onIcmp(s, o, length, nowNanos);
            return true;
        }
        return false;
    }

    private void onArp(final MemorySegment s, final long o, final int length, final long nowNanos)
    {
        if (length < ARP_FRAME_LENGTH)
        {
            counters.increment(NeighbourCounters.DROPPED_TRUNCATED);
            return;
        }
        final long arp = o + EthernetHeader.LENGTH;
        if (ArpHeader.hardwareType(s, arp) != ArpHeader.HARDWARE_TYPE_ETHERNET ||
            ArpHeader.protocolType(s, arp) != EthernetHeader.ETHER_TYPE_IPV4 ||
            ArpHeader.hardwareLength(s, arp) != 6 || ArpHeader.protocolLength(s, arp) != 4)
        {
            counters.increment(NeighbourCounters.DROPPED_BAD_FORMAT);
            return;
        }
        final int operation = ArpHeader.operation(s, arp);
        if (operation != ArpHeader.OPERATION_REQUEST && operation != ArpHeader.OPERATION_REPLY)
        {
            counters.increment(NeighbourCounters.DROPPED_BAD_OPERATION);
            return;
        }
        final long senderMac = ArpHeader.senderMac(s, arp);
        final int senderIp = ArpHeader.senderIp(s, arp);
        final int targetIp = ArpHeader.targetIp(s, arp);
        if (senderMac == localMac)
        {
            return; // our own frame, looped back by a promiscuous port
        }
        if (!EthernetHeader.isUnicast(senderMac) || EthernetHeader.sourceMac(s, o) != senderMac || !isUnicastIp(senderIp, true))
        {
            counters.increment(NeighbourCounters.DROPPED_BAD_SENDER);
            return;
        }
        if (senderIp == localIpv4)
        {
            counters.increment(NeighbourCounters.DROPPED_ADDRESS_CONFLICT); // another host claims our address
            return;
        }
        if (operation == ArpHeader.OPERATION_REQUEST)
        {
            counters.increment(NeighbourCounters.ARP_REQUESTS_RECEIVED);
        }
        else
        {
            counters.increment(NeighbourCounters.ARP_REPLIES_RECEIVED);
        }
        if (senderIp != 0 && senderIp == targetIp)
        {
            counters.increment(NeighbourCounters.GRATUITOUS_RECEIVED);
            update(InterfaceAddress.MAPPED_HIGH, InterfaceAddress.mappedLow(senderIp), senderMac, false, true, nowNanos);
            return;
        }
        if (targetIp != localIpv4)
        {
            counters.increment(NeighbourCounters.DROPPED_NOT_FOR_US);
            return;
        }
        if (operation == ArpHeader.OPERATION_REQUEST)
        {
            // judged before the request may change the entry's MAC: a stranger with a known address is a stranger
            final boolean known = isKnownNeighbour(InterfaceAddress.MAPPED_HIGH, InterfaceAddress.mappedLow(senderIp),
                senderMac);
            if (senderIp != 0)
            {
                // only an entry we have: requests make none
                update(InterfaceAddress.MAPPED_HIGH, InterfaceAddress.mappedLow(senderIp), senderMac, false, true, nowNanos);
            }
            if (takeNeighbourReplyCredit(known, nowNanos) &&
                writeArp(ArpHeader.OPERATION_REPLY, senderMac, localIpv4, senderMac, senderIp)) // a probe (sender 0) too
            {
                counters.increment(NeighbourCounters.ARP_REPLIES_SENT);
            }
        }
        else if (!update(InterfaceAddress.MAPPED_HIGH, InterfaceAddress.mappedLow(senderIp), senderMac, true, true, nowNanos))
        {
            counters.increment(NeighbourCounters.DROPPED_UNSOLICITED_REPLY);
        }
    }

    /**
     * @param answer   true for a reply (ARP reply, solicited NA): taken only when we asked (INCOMPLETE or STALE);
     *                 false for a request or an announcement: updates any entry that has been asked for or answered.
     * @param override false for an NA without the override flag: it confirms an entry's MAC but changes none.
     * @return true when an entry took it.
     */
    boolean update(final long high, final long low, final long mac, final boolean answer, final boolean override,
        final long nowNanos)
    {
        final int slot = cache.slot(high, low);
        if (slot == NeighbourCache.NONE)
        {
            return false;
        }
        final int state = cache.state(slot);
        // a failed entry takes an announcement (a host back, maybe with a new NIC) only while connections follow it
        final boolean failed = state == NeighbourCache.FAILED;
        if (state == NeighbourCache.PERMANENT || failed && (answer || cache.followers(slot) == 0) ||
            (answer && state != NeighbourCache.INCOMPLETE && state != NeighbourCache.STALE))
        {
            return false;
        }
        final boolean unresolved = state == NeighbourCache.INCOMPLETE || failed;
        final long old = cache.mac(slot);
        if (!override && !unresolved && old != mac)
        {
            return true; // RFC 4861 7.2.5: without the override flag a known MAC stays
        }
        if (!unresolved && old != mac && !macChanges.tryTake(nowNanos))
        {
            counters.increment(NeighbourCounters.MAC_CHANGES_RATE_LIMITED);
            return true; // taken, and refused: the entry and every connection keep the MAC they agree on
        }
        schedule(slot, NeighbourCache.REACHABLE, mac, nowNanos + config.reachableNanos(), 0);
        if (unresolved)
        {
            counters.increment(NeighbourCounters.RESOLVED);
            listener.onNextHop(plane, high, low, mac);
        }
        else if (old != mac)
        {
            counters.increment(NeighbourCounters.MAC_CHANGES);
            listener.onNextHop(plane, high, low, mac);
        }
        return true;
    }

    private void onIcmp(final MemorySegment s, final long o, final int length, final long nowNanos)
    {
        final long ip = o + EthernetHeader.LENGTH;
        final int headerLength = Ipv4Header.headerLength(s, ip);
        final int totalLength = Ipv4Header.totalLength(s, ip);
        // the RX parser checked these before it called the frame not ours; checked again, as this is reachable alone
        if (Ipv4Header.version(s, ip) != 4 || headerLength < Ipv4Header.LENGTH ||
            totalLength < headerLength + IcmpHeader.LENGTH || EthernetHeader.LENGTH + totalLength > length ||
            Ipv4Header.isFragment(s, ip) || !Ipv4Header.isChecksumValid(s, ip, headerLength))
        {
            counters.increment(NeighbourCounters.DROPPED_BAD_ICMP);
            return;
        }
        final long icmp = ip + headerLength;
        final int icmpLength = totalLength - headerLength;
        if (IcmpHeader.type(s, icmp) != IcmpHeader.TYPE_ECHO_REQUEST)
        {
            counters.increment(NeighbourCounters.ICMP_OTHER);
            return;
        }
        counters.increment(NeighbourCounters.ECHO_REQUESTS_RECEIVED);
        final int sourceIp = Ipv4Header.sourceAddress(s, ip);
        final long sourceMac = EthernetHeader.sourceMac(s, o);
        if (Ipv4Header.destinationAddress(s, ip) != localIpv4)
        {
            counters.increment(NeighbourCounters.DROPPED_NOT_FOR_US);
            return;
        }
        if (IcmpHeader.code(s, icmp) != 0 || IcmpHeader.internetChecksum(s, icmp, icmpLength) != 0)
        {
            counters.increment(NeighbourCounters.DROPPED_BAD_ICMP);
            return;
        }
        if (!EthernetHeader.isUnicast(sourceMac) || !isUnicastIp(sourceIp, false) || sourceIp == localIpv4)
        {
            counters.increment(NeighbourCounters.DROPPED_BAD_SENDER);
            return;
        }
        final int replyLength = EthernetHeader.LENGTH + Ipv4Header.LENGTH + icmpLength;
        final int claimLength = claimEchoReply(replyLength, nowNanos);
        if (claimLength < 0)
        {
            return;
        }
        final MemorySegment b = sink.buffer();
        final long f = sink.offset();
        // the reply goes back to the link-layer sender: the peer on-link, the router that forwarded it off-link
        EthernetHeader.destinationMac(b, f, sourceMac);
        EthernetHeader.sourceMac(b, f, localMac);
        EthernetHeader.etherType(b, f, EthernetHeader.ETHER_TYPE_IPV4);
        final long rip = f + EthernetHeader.LENGTH;
        Ipv4Header.write(b, rip, 0, Ipv4Header.LENGTH + icmpLength, ipIdentification++, ECHO_TTL, IcmpHeader.PROTOCOL_ICMP,
            localIpv4, sourceIp);
        final long ricmp = rip + Ipv4Header.LENGTH;
        MemorySegment.copy(s, icmp, b, ricmp, icmpLength); // identifier, sequence and data echoed unchanged
        IcmpHeader.type(b, ricmp, IcmpHeader.TYPE_ECHO_REPLY);
        IcmpHeader.checksum(b, ricmp, 0);
        IcmpHeader.checksum(b, ricmp, IcmpHeader.internetChecksum(b, ricmp, icmpLength));
        pad(b, f, replyLength, claimLength);
        sink.commit(claimLength);
        counters.increment(NeighbourCounters.ECHO_ANSWERED);
    }

    /**
     * Claims an echo reply of {@code replyLength} bytes, padded to the Ethernet minimum, within the echo reply rate.
     *
     * @return the length claimed, or -1 when the reply is larger than a frame, over the rate or finds no buffer
     * (each counted).
     */
    int claimEchoReply(final int replyLength, final long nowNanos)
    {
        if (replyLength > sink.maxFrameLength())
        {
            counters.increment(NeighbourCounters.DROPPED_TOO_LARGE);
            return -1;
        }
        if (!echoReplies.tryTake(nowNanos))
        {
            counters.increment(NeighbourCounters.ECHO_RATE_LIMITED);
            return -1;
        }
        final int claimLength = Math.max(replyLength, EthernetHeader.MIN_FRAME_LENGTH);
        if (!sink.claim(0, claimLength))
        {
            counters.increment(NeighbourCounters.TX_FULL);
            return -1;
        }
        return claimLength;
    }

    /** @return whether an ARP reply or neighbour advertisement may go now (counted when not). */
    boolean takeNeighbourReplyCredit(final long nowNanos)
    {
        if (neighbourReplies.tryTake(nowNanos))
        {
            return true;
        }
        counters.increment(NeighbourCounters.RATE_LIMITED);
        return false;
    }

    /**
     * As {@link #takeNeighbourReplyCredit(long)}; a reply to a {@link #isKnownNeighbour known neighbour} comes from a
     * bucket of its own, which strangers cannot empty.
     */
    boolean takeNeighbourReplyCredit(final boolean known, final long nowNanos)
    {
        return known && knownNeighbourReplies.tryTake(nowNanos) || takeNeighbourReplyCredit(nowNanos);
    }

    /** @return whether this agent holds {@code high, low} resolved to {@code mac} (asked before it may change it). */
    boolean isKnownNeighbour(final long high, final long low, final long mac)
    {
        final int slot = cache.slot(high, low);
        if (slot == NeighbourCache.NONE)
        {
            return false;
        }
        final int state = cache.state(slot);
        return state != NeighbourCache.INCOMPLETE && state != NeighbourCache.FAILED && cache.mac(slot) == mac;
    }

    // destinationMac 0: to everyone who may have it (ARP broadcast, the NS's solicited-node multicast)
    private void sendRequest(final long high, final long low, final long destinationMac)
    {
        if (null != discovery)
        {
            discovery.solicit(high, low, destinationMac);
        }
        else if (writeArp(ArpHeader.OPERATION_REQUEST, 0 == destinationMac ? BROADCAST_MAC : destinationMac, localIpv4, 0,
            (int)low))
        {
            counters.increment(NeighbourCounters.ARP_REQUESTS_SENT);
        }
    }

    private boolean writeArp(final int operation, final long destinationMac, final int senderIp, final long targetMac,
        final int targetIp)
    {
        if (!sink.claim(0, EthernetHeader.MIN_FRAME_LENGTH))
        {
            counters.increment(NeighbourCounters.TX_FULL);
            return false;
        }
        final MemorySegment b = sink.buffer();
        final long f = sink.offset();
        EthernetHeader.destinationMac(b, f, destinationMac);
        EthernetHeader.sourceMac(b, f, localMac);
        EthernetHeader.etherType(b, f, ArpHeader.ETHER_TYPE_ARP);
        ArpHeader.write(b, f + EthernetHeader.LENGTH, operation, localMac, senderIp, targetMac, targetIp);
        pad(b, f, ARP_FRAME_LENGTH, EthernetHeader.MIN_FRAME_LENGTH);
        sink.commit(EthernetHeader.MIN_FRAME_LENGTH);
        return true;
    }

    static void pad(final MemorySegment b, final long f, final int from, final int to)
    {
        for (int i = from; i < to; i++)
        {
            b.set(Wire.BYTE, f + i, (byte)0);
        }
    }

    /** @return true for a host address: not multicast, not limited broadcast, not loopback; 0 only if allowed. */
    static boolean isUnicastIp(final int ipv4, final boolean zeroAllowed)
    {
        final int first = ipv4 >>> 24;
        return (ipv4 != 0 || zeroAllowed) && ipv4 != -1 && first != 127 && first < 224;
    }
}
