package io.spraynic.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every numeric, size and duration option of every command, given a value of the wrong type, out of range,
 * non-finite or overflowing: the command answers with exit code 2 and one sentence that names the option and
 * the value, says what is allowed and gives a value that works, and never prints the usage (that is for
 * {@code --help}). Each bad value is refused before the command starts anything (no DPDK, no files).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class BadArgumentsTest
{
    /** A command line (the bad option and its value last), the option and value the sentence must name. */
    private static Arguments bad(final String commandLine, final String allowedHint)
    {
        final String[] args = commandLine.split(" ");
        return Arguments.of(String.join(" ", args), args[args.length - 2], args[args.length - 1], allowedHint);
    }

    static Stream<Arguments> badArguments()
    {
        final List<Arguments> table = new ArrayList<>();
        // spraynic demo (spray mode: the fabric options; raw mode: its own)
        table.add(bad("demo --planes 0", "1..8"));
        table.add(bad("demo --planes 9", "1..8"));
        table.add(bad("demo --planes two", "not a whole number"));
        table.add(bad("demo --planes 99999999999", "too large"));
        table.add(bad("demo --planes 4 --paths 3", "4..64"));
        table.add(bad("demo --paths 65", "..64"));
        table.add(bad("demo --paths 8x", "not a whole number"));
        table.add(bad("demo --loss 100", "below 100"));
        table.add(bad("demo --loss -1", "at least 0"));
        table.add(bad("demo --loss NaN", "not a finite"));
        table.add(bad("demo --loss Infinity", "not a finite"));
        table.add(bad("demo --loss 1%", "not a number"));
        table.add(bad("demo --size 2x", "not a size"));
        table.add(bad("demo --size 100k", "must be 1m.."));
        // more than the host holds twice over: before, an allocation failure once the fabric had started
        table.add(bad("demo --size 1024g", "times over in memory"));
        table.add(bad("demo --size 99999999999g", "too large"));
        table.add(bad("demo --size 99999999999999999999", "too large"));
        table.add(bad("demo --size -5m", "negative"));
        table.add(bad("demo --link-gbps 0", "--link-gbps"));
        table.add(bad("demo --link-gbps 100001", "--link-gbps"));
        table.add(bad("demo --threads 2", "auto, shared or dedicated"));
        table.add(bad("demo --threads Shared", "auto, shared or dedicated"));
        table.add(bad("demo --streams 0", "1..256"));
        table.add(bad("demo --streams 257", "1..256"));
        table.add(bad("demo --timeout 0", "1..86400"));
        table.add(bad("demo --timeout 1.5", "not a whole number"));
        table.add(bad("demo --mode raw --frame-size 59", "60..2048"));
        table.add(bad("demo --mode raw --frame-size 4096", "60..2048"));
        table.add(bad("demo --mode raw --burst 0", "1..512"));
        table.add(bad("demo --mode raw --burst 513", "1..512"));
        table.add(bad("demo --mode raw --frames 0", "at least 1"));
        table.add(bad("demo --mode raw --frames lots", "not a size"));
        // spraynic bench
        table.add(bad("bench raw --seconds 0", "0.001..86400"));
        table.add(bad("bench ipc --depth 0", "1..1024"));
        table.add(bad("bench ipc --seconds 0", "0.001..86400"));
        table.add(bad("bench connections --bytes 16777216 --messages 65536", "at most 2 GiB"));
        table.add(bad("bench connections --connections 0", "1..100000"));
        // 2^31 messages of 1 B fit the region, but their timestamps do not fit the heap (an int overflowed)
        table.add(bad("bench connections --connections 32768 --bytes 1 --messages 65536", "at most 4194304"));
        table.add(bad("bench connections --depth 0", "1..1024"));
        table.add(bad("bench connections --workers 17", "1..16"));
        table.add(bad("bench connections --transport tcp", "must be spray or rocev2"));
        table.add(bad("bench connections --storage-limit 0", "must be -1 or at least 1"));
        table.add(bad("bench raw --seconds NaN", "not a finite"));
        table.add(bad("bench raw --burst 0", "1..512"));
        table.add(bad("bench raw --length 59", "60..2048"));
        table.add(bad("bench raw --length 64b", "not a whole number"));
        table.add(bad("bench raw --rounds 0", "at least 1"));
        table.add(bad("bench raw --processes 0", "at least 1"));
        table.add(bad("bench nic --queues 17", "1..16"));
        table.add(bad("bench nic --seconds -1", "0.001..86400"));
        table.add(bad("bench workers --workers 0", "1..16"));
        table.add(bad("bench workers --seconds 0", "0.001..86400"));
        table.add(bad("bench latency --length 7", "8.."));
        table.add(bad("bench latency --iterations 0", "at least 1"));
        table.add(bad("bench latency --warmup -1", "at least 0"));
        table.add(bad("bench latency --rounds 0", "at least 1"));
        table.add(bad("bench capture --workload tcp", "must be receive, spray or rocev2"));
        table.add(bad("bench capture --workload spray --workers 2", "must be 1 with --workload spray"));
        table.add(bad("bench capture --workers 17", "1..16"));
        table.add(bad("bench capture --size 59", "60..9000"));
        table.add(bad("bench capture --workload rocev2 --size 0", "1..1048576"));
        table.add(bad("bench capture --workload spray --size 1048577", "1..1048576"));
        table.add(bad("bench capture --snaplen 63", "64..9216"));
        table.add(bad("bench capture --rounds 0", "1..100"));
        table.add(bad("bench capture --seconds 0", "0.001..86400"));
        table.add(bad("bench capture --filter bogus", "unknown filter term"));
        table.add(bad("bench capture --sample 0", "1..16777216"));
        table.add(bad("bench capture --snaplen 64 --ring-size 1024", "a ring of 1024 B is not in 1280..1073741824 B"));
        table.add(bad("bench capture --workers 16 --ring-size 536870912", "more than the 1073741824 B allowed"));
        table.add(bad("bench capture --workload spray --sample -4", "1..16777216"));
        table.add(bad("bench throughput --seconds 0", "0.001..86400"));
        table.add(bad("bench throughput --warmup -1", "0..3600"));
        table.add(bad("bench throughput --threads 3", "1..2"));
        table.add(bad("bench throughput --sizes 64,0", "1..67108864"));
        // above what a run sends: before, refused only after DPDK had started and the first points had run
        table.add(bad("bench throughput --sizes 134217728", "1..67108864"));
        table.add(bad("bench throughput --sizes 64,x", "not a whole number"));
        table.add(bad("bench throughput --mtu 1500", "256, 512, 1024, 2048 or 4096"));
        table.add(bad("bench throughput --mtu 4096,9000", "256, 512, 1024, 2048 or 4096"));
        table.add(bad("bench throughput --mtu big", "not a whole number"));
        // spraynic nic
        table.add(bad("nic --config net_null --seconds -1", "0..31536000"));
        table.add(bad("nic --config net_null --hugepages sometimes", "must be auto, on or off"));
        table.add(bad("capture out.pcapng --snaplen 63", "64..9216"));
        table.add(bad("capture out.pcapng --snaplen 9217", "64..9216"));
        table.add(bad("capture out.pcapng --ring-slots 1000", "a power of two, 16..65536"));
        table.add(bad("capture out.pcapng --ring-slots 131072", "a power of two, 16..65536"));
        table.add(bad("capture out.pcapng --ring-size 0", "must be 65792..1073733504 B"));
        table.add(bad("capture out.pcapng --snaplen 64 --ring-size 1279", "must be 1280..1073733504 B"));
        table.add(bad("capture out.pcapng --ring-size -1m", "negative"));
        table.add(bad("capture out.pcapng --ring-size 9999999999g", "too large"));
        table.add(bad("capture out.pcapng --ring-size 8m --ring-slots 2048", "sizes the ring as --ring-size does"));
        table.add(bad("capture out.pcapng --sample 0", "1..16777216"));
        table.add(bad("capture out.pcapng --sample -1", "1..16777216"));
        table.add(bad("capture out.pcapng --sample 16777217", "1..16777216"));
        table.add(bad("capture out.pcapng --sample every", "not a whole number"));
        table.add(bad("nic --config net_null --seconds NaN", "not a finite"));
        table.add(bad("nic --config net_null --rocev2-line-rate 0", "a rate must be 1 bit/s..100 Tbit/s"));
        table.add(bad("nic --config net_null --rocev2-line-rate fast", "not a rate"));
        table.add(bad("nic --config net_null --dcqcn rate_ai=4000x", "not a rate"));
        table.add(bad("nic --config net_null --dcqcn time_reset=55", "not a period"));
        table.add(bad("nic --config net_null --dcqcn threshold=0", "threshold"));
        table.add(bad("nic --config net_null --dcqcn min_rate=200gbit", "min <= line"));
        table.add(bad("nic --config net_null --dcqcn rate_max=1mbit", "is not one of"));
        table.add(bad("transfer --ip 10.0.0.1 --exchange /nonexistent --dcqcn g=1.5", "g must be in (0, 1)"));
        table.add(bad("transfer --ip 10.0.0.1 --exchange /nonexistent --size 1024g", "times over in memory"));
        // refused before the NIC starts: before, after DPDK, the exchange directory and the counters file, with exit 1
        table.add(bad("transfer --ip 10.0.0.1 --exchange /nonexistent --peer-kind bogus", "is not one of transfer, nic"));
        table.add(bad("transfer --ip 10.0.0.1 --exchange /nonexistent --peer-kind nic --role server",
            "must be client with --peer-kind nic"));
        table.add(bad("transfer --ip 10.0.0.1 --exchange /nonexistent --mode roce", "is not one of spray, rocev2"));
        table.add(bad("transfer --ip 10.0.0.1 --exchange /nonexistent --role peer", "is not one of client, server"));
        table.add(bad("nic --config net_null --mode bridge", "is not one of classify, spray, rocev2"));
        table.add(bad("nic --config net_null --ip 10.0.0.1 --max-connections-per-source 0", "1..1048576"));
        table.add(bad("nic --config net_null --workers 0", "1..64"));
        table.add(bad("nic --config net_null --workers 65", "1..64"));
        table.add(bad("nic --config net_null --expose 2t", "not a size"));
        table.add(bad("nic --config net_null --expose 2048g", "0..1024g"));
        table.add(bad("nic --config net_null --ipc-client-timeout 0", "0.1..86400"));
        table.add(bad("nic --config net_null --ipc-client-timeout 0.001", "0.1..86400")); // every client released at once
        table.add(bad("nic --config net_null --ipc-max-clients 0", "1..65536"));
        table.add(bad("nic --config net_null --ipc-max-clients 65537", "1..65536"));
        table.add(bad("nic --config net_null --ipc-max-clients many", "not a whole number"));
        table.add(bad("nic --config net_null --ipc-max-regions 0", "1..65536"));
        table.add(bad("nic --config net_null --ipc-max-connections -1", "1..65536"));
        table.add(bad("nic --config net_null --ipc-max-connections 99999999999", "too large"));
        table.add(bad("nic --config net_null --ipc-group users", "give --ipc-dir too"));
        table.add(bad("nic --config net_null --ipc-dir /nonexistent/ipc --ipc-group 100", "not a group name"));
        table.add(bad("nic --config net_null --metrics 9464", "HOST:PORT"));
        table.add(bad("nic --config net_null --metrics 127.0.0.1:65536", "0..65535"));
        table.add(bad("metrics --listen localhost", "HOST:PORT"));
        table.add(bad("metrics --listen [::1]:http", "HOST:PORT"));
        table.add(bad("metrics --listen 127.0.0.1:0 --seconds -1", "0..31536000"));
        // the response bucket (S12.9, S10.2-2)
        table.add(bad("nic --config net_null --connect-response-rate 0", "1..100000000"));
        table.add(bad("nic --config net_null --connect-response-rate -1", "1..100000000"));
        table.add(bad("nic --config net_null --connect-response-rate fast", "not a whole number"));
        table.add(bad("nic --config net_null --connect-response-burst 0", "1..1000000"));
        table.add(bad("nic --config net_null --connect-response-burst -5", "1..1000000"));
        table.add(bad("nic --config net_null --connect-response-burst 1000001", "1..1000000"));
        table.add(bad("nic --config net_null --connect-response-burst many", "not a whole number"));
        table.add(bad("nic --config net_null --rocev2-ack-timeout 0", "1..31"));
        table.add(bad("nic --config net_null --rocev2-ack-timeout 32", "1..31"));
        for (final String rotation : new String[]{"abc", "5-1", "0-10", "1-70000", "-5", "1-", "-", "16-32-64",
            "99999999999-99999999999", "1-99999999999999999999", "Off", "١-٢"})
        {
            table.add(bad("nic --config net_null --port-rotation " + rotation, "1 <= MIN <= MAX <= 65536, or off"));
        }
        table.add(bad("transfer --ip 10.0.0.1 --exchange /nonexistent --port-rotation 32-16", "1 <= MIN <= MAX"));
        for (final String window : new String[]{"abc", "5-1", "3-3", "0-1000001", "1000001", "-5", "1-", "-", "1-2-3",
            "99999999999", "1-99999999999999999999", "Off", "1.5", "10us", "١٢"})
        {
            table.add(bad("nic --config net_null --reorder-window " + window, "0 <= MIN < MAX <= 1000000"));
        }
        table.add(bad("transfer --ip 10.0.0.1 --exchange /nonexistent --reorder-window 20-10", "must be off, US or MIN-MAX"));
        // spraynic transfer
        table.add(bad("transfer --ip 10.0.0.1 --exchange /nonexistent --size 0", "must be 1.."));
        table.add(bad("transfer --ip 10.0.0.1 --exchange /nonexistent --size 2x", "not a size"));
        table.add(bad("transfer --ip 10.0.0.1 --exchange /nonexistent --message 2g", "1..1g"));
        table.add(bad("transfer --ip 10.0.0.1 --exchange /nonexistent --rocev2-ack-timeout 0", "1..31"));
        table.add(bad("transfer --ip 10.0.0.1 --exchange /nonexistent --rocev2-ack-timeout 67ms", "not a whole number"));
        table.add(bad("demo --fabric linux --rocev2-ack-timeout 32", "1..31"));
        table.add(bad("demo --fabric linux --size 4m --warmup 8m", "0..4m"));
        table.add(bad("demo --fabric linux --warmup 1x", "not a size"));
        table.add(bad("demo --fabric linux --port-kind af_xpd", "must be af_packet, af_xdp or udp"));
        table.add(bad("demo --fabric linux --port-kind net_af_packet", "must be af_packet, af_xdp or udp"));
        table.add(bad("demo --port-kind udp", "applies to --fabric linux only"));
        table.add(bad("transfer --ip 10.0.0.1 --exchange /nonexistent --peer-kind nic --warmup 2x", "not a size"));
        table.add(bad("transfer --ip 10.0.0.1 --exchange /nonexistent --peer-kind nic --warmup -1m", "negative"));
        table.add(bad("transfer --ip 10.0.0.1 --exchange /nonexistent --peer-kind transfer --warmup 1m",
            "only a visit warms up (--peer-kind nic)"));
        table.add(bad("transfer --ip 10.0.0.1 --exchange /nonexistent --peer-kind nic --warmup 1m --warmup-connection new",
            "is not one of same, fresh"));
        table.add(bad("transfer --ip 10.0.0.1 --exchange /nonexistent --peer-kind nic --warmup-connection fresh",
            "follows a warm-up (--warmup BYTES)"));
        table.add(bad("transfer --ip 10.0.0.1 --exchange /nonexistent --peer-kind nic --mode rocev2 --warmup 1m " +
            "--warmup-connection fresh", "is spray's"));
        table.add(bad("transfer --ip 10.0.0.1 --exchange /nonexistent --workers 0", "1..64"));
        table.add(bad("transfer --ip 10.0.0.1 --exchange /nonexistent --paths 65", "1..64"));
        table.add(bad("transfer --ip 10.0.0.1 --exchange /nonexistent --timeout 0", "1..86400"));
        table.add(bad("transfer --exchange /nonexistent --ip 10.0.1.300/24", "not an IPv4 address"));
        table.add(bad("transfer --exchange /nonexistent --ip 10.0.1.10/40", "no valid prefix length"));
        table.add(bad("transfer --exchange /nonexistent --ip fd00::1/64 --gateway 10.0.0.1", "not of the family"));
        table.add(bad("transfer --exchange /nonexistent --ip 10.0.1.10/24 --gateway 10.0.2.1", "not inside 10.0.1.10/24"));
        table.add(bad("nic --config net_null --mode spray --ip 10.0.1.10 --gateway 10.0.1.1", "needs a prefix"));
        table.add(bad("nic --config net_null --mode spray --ip 10.0.1.10/24,10.0.2.10/24 --gateway 10.0.1.1", "one per --ip"));
        table.add(bad("nic --config net_null --mode spray --ip 224.0.0.5/24", "not a unicast address"));
        table.add(bad("nic --config net_null --mode spray --ip 127.0.0.5", "only a udp port"));
        // IPv6 plane addresses, as a udp port's plane takes them too (--config udp -p ip=fd00:1::10 --ip fd00:1::10)
        table.add(bad("nic --config udp --mode spray --ip fd00:1::10::1", "not an IPv6 address"));
        table.add(bad("nic --config udp --mode spray --ip fd00:1:::10", "not an IPv6 address"));
        table.add(bad("nic --config udp --mode spray --ip fd00:12345::1", "not an IPv6 address"));
        table.add(bad("nic --config udp --mode spray --ip 1:2:3:4:5:6:7:8:9", "not an IPv6 address"));
        table.add(bad("nic --config udp --mode spray --ip [::1]", "not an IPv6 address"));
        table.add(bad("nic --config udp --mode spray --ip fe80::1%eth0", "not an IPv6 address"));
        table.add(bad("nic --config udp --mode spray --ip fd00:1::10/129", "no valid prefix length"));
        table.add(bad("nic --config udp --mode spray --ip ff02::1", "not a unicast IPv6 address"));
        table.add(bad("nic --config udp --mode spray --ip ::", "not a unicast IPv6 address"));
        table.add(bad("nic --config udp --mode spray --ip ::ffff:10.0.0.1", "IPv4-mapped"));
        table.add(bad("transfer --exchange /nonexistent --ip fd00:1::10/64 --gateway fd00:2::1", "neither inside"));
        table.add(bad("nic --config udp --mode spray --ip iface6:nope" + ProcessHandle.current().pid(),
            "there is no interface"));
        // a Kubernetes pod's VFs on vfio-pci: PCI addresses from the device plugin, plane addresses from Multus
        table.add(bad("nic --config udp --mode spray --network-status /nonexistent/network-status " +
            "--network-status-timeout 0 --ip netstatus:net1", "there is no /nonexistent/network-status"));
        table.add(bad("nic --config udp --mode spray --ip netstatus:net1", "needs --network-status"));
        table.add(bad("nic --config udp --mode spray --network-status-timeout -1", "0..3600"));
        table.add(bad("nic --config udp --mode spray --ip 10.0.0.1 --param-from-env ip=SPRAYNIC_UNSET_" +
            ProcessHandle.current().pid(), "is not set"));
        // spraynic client
        table.add(bad("client --size 0", "at least 1"));
        table.add(bad("client --message 0", "1..1g"));
        table.add(bad("client --timeout 0", "0.001..86400"));
        table.add(bad("client --timeout NaN", "not a finite"));
        // spraynic stat
        table.add(bad("stat --watch -1", "0 or 0.1..86400"));
        // a reprint every 0 ms: a loop at full CPU
        table.add(bad("stat --watch 0.05", "0 or 0.1..86400"));
        table.add(bad("stat --watch Infinity", "not a finite"));
        // spraynic experiment
        table.add(bad("experiment loss-sweep --planes 17", "1..16"));
        table.add(bad("experiment loss-sweep --realtime --planes 9", "1..8"));
        table.add(bad("experiment loss-sweep --bytes 1k", "at least 1m"));
        table.add(bad("experiment loss-sweep --realtime --repeats 16", "1..15"));
        table.add(bad("experiment loss-sweep --realtime --loss 0,100", "below 100"));
        table.add(bad("experiment loss-sweep --realtime --loss 1,NaN", "not a finite"));
        table.add(bad("experiment reorder --bytes 4k", "at least 1m"));
        table.add(bad("experiment reorder-within --bytes 4k", "at least 1m"));
        table.add(bad("experiment reorder-within --skew-us 1001", "0..1000"));
        table.add(bad("experiment reorder-within --window-us 0", "1..1000"));
        table.add(bad("experiment reorder-within --balance hash", "round-robin or least-queued"));
        table.add(bad("experiment incast --senders 8,251", "1..250"));
        table.add(bad("experiment incast --bytes 1k", "at least 4k"));
        table.add(bad("experiment incast --band 1", "below 1"));
        table.add(bad("experiment incast --band NaN", "not a finite"));
        table.add(bad("experiment planes --planes 0", "1..16"));
        table.add(bad("experiment planes --connections 8001", "1..8000"));
        table.add(bad("experiment planes --bytes 1k", "at least 1m"));
        table.add(bad("experiment plane-failure --planes 1", "2..16"));
        table.add(bad("experiment plane-failure --bytes 1k", "at least 1m"));
        table.add(bad("experiment plane-failure --fail-at-us 0", "1.."));
        table.add(bad("experiment plane-failure --fail-at-us 99999999999999999", "1.."));
        table.add(bad("experiment plane-failure --bin-us 0", "1.."));
        table.add(bad("experiment collectives --nodes 12", "multiple of 8"));
        table.add(bad("experiment collectives --nodes 256", "8..128"));
        table.add(bad("experiment collectives --bytes 1k", "at least 64k"));
        table.add(bad("experiment collectives --all-to-all-bytes 1k", "at least 64k"));
        // spraynic conformance: each refused before the suite opens a socket or reads an exchange
        final String conformance = "conformance --target udp:127.0.0.1 ";
        table.add(bad("conformance --target 127.0.0.1", "udp:HOST[:PORT]"));
        table.add(bad("conformance --target udp:127.0.0.1:70000", "port 1..65535"));
        table.add(bad(conformance + "--local 127.0.0.2:0", "port 1..65535"));
        table.add(bad(conformance + "--planes 0", "1..255"));
        table.add(bad(conformance + "--target-connection-limit 0", "1..256"));
        table.add(bad(conformance + "--target-connection-limit many", "not a whole number"));
        table.add(bad(conformance + "--target-idle-timeout -1", "0..86400"));
        table.add(bad(conformance + "--target-response-rate 0", "1..100000000"));
        table.add(bad(conformance + "--target-response-rate -1", "1..100000000"));
        table.add(bad(conformance + "--target-response-rate 2.5", "not a whole number"));
        table.add(bad(conformance + "--target-response-burst 0", "1..1000000"));
        table.add(bad(conformance + "--target-response-burst -1", "1..1000000"));
        table.add(bad(conformance + "--target-response-burst many", "not a whole number"));
        table.add(bad(conformance + "--target-idle-timeout NaN", "not a finite"));
        table.add(bad(conformance + "--interop tcp:127.0.0.1", "udp:HOST[:PORT]"));
        table.add(bad(conformance + "--interop udp:127.0.0.1", "needs --interop-exchange DIR"));
        table.add(bad(conformance + "--interop-exchange /tmp/x", "needs --interop udp:HOST[:PORT]"));
        table.add(bad(conformance + "--interop udp:127.0.0.1 --interop-exchange /tmp/x --interop-loss 51", "0..50"));
        table.add(bad(conformance + "--interop-seed x", "not a whole number"));
        table.add(bad(conformance + "--initiator 10.0.0.1", "udp:HOST[:PORT]"));
        table.add(bad(conformance + "--initiator udp:127.0.0.1", "needs --initiator-exchange DIR"));
        table.add(bad(conformance + "--initiator-exchange /tmp/x", "needs --initiator udp:HOST[:PORT]"));
        table.add(bad(conformance + "--psk-file /nonexistent/spraynic.key", "is refused"));
        table.add(bad(conformance + "--region 1:2", "ADDR:RKEY:LENGTH"));
        table.add(bad(conformance + "--region 1:4294967296:4096", "0..4294967295"));
        table.add(bad(conformance + "--region 1:-1:4096", "0..4294967295"));
        table.add(bad(conformance + "--region 1:1:-4096", "0..4294967295"));
        table.add(bad(conformance + "--target-late-margin-max -1", "0..3600"));
        table.add(bad(conformance + "--target-late-margin-max NaN", "not a finite"));
        table.add(bad(conformance + "--target-late-margin-max 3601", "0..3600"));
        table.add(bad(conformance + "--target-deregister-timeout 0", "0.1..3600"));
        table.add(bad(conformance + "--target-deregister-timeout Infinity", "not a finite"));
        // spraynic deregister: refused before it reads the directory
        table.add(bad("deregister --exchange /tmp/x --timeout 0", "0.1..3600"));
        table.add(bad("deregister --exchange /tmp/x --timeout -5", "0.1..3600"));
        table.add(bad("deregister --exchange /tmp/x --timeout NaN", "not a finite"));
        return table.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badArguments")
    void shouldRefuseABadValueInOneSentenceThatNamesTheOptionAndAFix(
        final String commandLine, final String option, final String value, final String allowed)
    {
        final CliTestSupport.Run run = CliTestSupport.run(commandLine.split(" "));
        final String err = run.err().strip();
        System.out.println(err); // the table's sentences, for review in the test report
        assertEquals(2, run.exitCode(), commandLine + ": " + run.err() + run.out());
        assertEquals(1, err.lines().count(), "one sentence: " + err);
        assertTrue(err.startsWith("spraynic "), err);
        assertTrue(err.contains(": " + option + " "), "names the option: " + err);
        assertTrue(err.contains(option + " " + value.replaceFirst("^.*,", "") + ": ") ||
            err.contains(option + " " + value + ": "), "names the value: " + err);
        assertTrue(err.contains(allowed), "says what is allowed (" + allowed + "): " + err);
        assertTrue(err.contains("; try " + option + " "), "gives a value that works: " + err);
        assertFalse(err.contains("Usage") || run.out().contains("Usage"), "no usage dump: " + err + run.out());
        assertFalse(err.contains("\tat ") || err.contains("Exception"), "no stack trace or exception name: " + err);
    }

    /**
     * An option a mode would ignore is refused, as a usage error that names it: before, a RoCEv2 transfer given a key
     * ran unauthenticated without a word, the Linux demo wrote no capture, and classify mode took a connection's
     * settings.
     */
    @Test
    void shouldRefuseAnOptionTheModeWouldIgnore()
    {
        final List<List<String>> ignored = List.of(
            List.of("transfer", "--ip", "10.0.0.1", "--exchange", "/nonexistent", "--mode", "rocev2", "--psk-file",
                "/nonexistent/k", "with --mode rocev2"),
            List.of("transfer", "--ip", "10.0.0.1", "--exchange", "/nonexistent", "--mode", "rocev2", "--port-rotation",
                "8-8", "with --mode rocev2"),
            List.of("nic", "--config", "net_null", "--ip", "10.0.0.1", "--exchange", "/nonexistent", "--mode", "rocev2",
                "--reorder-window", "50", "with --mode rocev2"),
            List.of("nic", "--config", "net_null", "--mode", "classify", "--psk-file", "/nonexistent/k",
                "with --mode classify"),
            List.of("nic", "--config", "net_null", "--mode", "classify", "--ip", "10.0.0.1", "with --mode classify"),
            List.of("demo", "--fabric", "linux", "--capture", "/nonexistent/x.pcapng", "with --fabric linux"));
        for (final List<String> line : ignored)
        {
            final String option = line.get(line.size() - 3);
            final CliTestSupport.Run run = CliTestSupport.run(line.subList(0, line.size() - 1).toArray(String[]::new));
            final String err = run.err().strip();
            assertEquals(2, run.exitCode(), line + ": " + err + run.out());
            assertEquals(1, err.lines().count(), err);
            assertTrue(err.contains(option + " " + line.get(line.size() - 2) + ": does nothing " +
                line.getLast()) && err.endsWith("; drop " + option), err);
        }
    }

    /**
     * The suite publishes into exchange directories: one others may write into is refused before anything runs (a
     * link planted at nic.addr.tmp had the suite truncate its target).
     */
    @Test
    void shouldRefuseAConformanceExchangeDirectoryOthersMayWriteInto(@org.junit.jupiter.api.io.TempDir final Path dir)
        throws Exception
    {
        final Path open = java.nio.file.Files.createDirectory(dir.resolve("open"));
        java.nio.file.Files.setPosixFilePermissions(open, java.nio.file.attribute.PosixFilePermissions.fromString(
            "rwxrwxrwx"));
        for (final String option : List.of("--initiator-exchange", "--interop-exchange"))
        {
            final List<String> line = new ArrayList<>(List.of("conformance", "--target", "udp:127.0.0.1:47999",
                "--region", "1:1:1048576", option, open.toString()));
            line.addAll(List.of(option.equals("--initiator-exchange") ? "--initiator" : "--interop",
                "udp:127.0.0.1:47998"));
            final CliTestSupport.Run run = CliTestSupport.run(line.toArray(String[]::new));
            assertTrue(run.exitCode() != 0, option + ": " + run.err() + run.out());
            assertTrue(run.err().contains("others may replace the files in it"), option + ": " + run.err());
        }
    }

    @Test
    void shouldRefuseAnEmptyPortRotation()
    {
        for (final String command : List.of("nic", "transfer"))
        {
            final CliTestSupport.Run run = CliTestSupport.run(command, "--ip", "10.0.0.1", "--exchange", "/nonexistent",
                "--port-rotation=");
            final String err = run.err().strip();
            assertEquals(2, run.exitCode(), err + run.out());
            assertEquals(1, err.lines().count(), err);
            assertTrue(err.contains("--port-rotation : must be MIN-MAX packets") && err.contains("; try --port-rotation 16-32"),
                err);
        }
    }

    @Test
    void shouldRefuseAnEmptyDeregisterCommand()
    {
        for (final String empty : List.of("", "  "))
        {
            final CliTestSupport.Run run = CliTestSupport.run("conformance", "--target", "udp:127.0.0.1",
                "--region", "1:1:4096", "--target-deregister-command", empty);
            final String err = run.err().strip();
            assertEquals(2, run.exitCode(), err + run.out());
            assertEquals(1, err.lines().count(), err);
            assertTrue(err.contains("--target-deregister-command '': is empty; try --target-deregister-command " +
                "'spraynic deregister --exchange DIR'"), err);
        }
    }

    @Test
    void shouldRefuseAWarmupHoldWithoutAWarmupAndProposeOne()
    {
        final CliTestSupport.Run run = CliTestSupport.run("transfer", "--ip", "10.0.0.1", "--exchange", "/nonexistent",
            "--peer-kind", "nic", "--warmup-hold");
        final String err = run.err().strip();
        assertEquals(2, run.exitCode(), err + run.out());
        assertEquals(1, err.lines().count(), err);
        assertTrue(err.contains("--warmup-hold : holds after a warm-up, and there is none; try --warmup 1m"), err);
    }

    @Test
    void shouldProposeValuesThatAreAccepted()
    {
        // the fix a range error proposes is itself in range: --loss 100 proposes a rate below 100
        final CliTestSupport.Run loss = CliTestSupport.run("demo", "--loss", "100");
        assertTrue(loss.err().contains("try --loss 1"), loss.err());
        final CliTestSupport.Run burst = CliTestSupport.run("demo", "--mode", "raw", "--burst", "1000");
        assertTrue(burst.err().contains("try --burst 512"), burst.err());
        final CliTestSupport.Run size = CliTestSupport.run("demo", "--size", "100k");
        assertTrue(size.err().contains("try --size 1m"), size.err());
    }

    @Test
    void shouldRefuseOtherParameterErrorsInOneLineWithoutUsage()
    {
        for (final String[] args : List.of(
            new String[]{"demo", "--no-such-option"},
            new String[]{"nic"},
            new String[]{"demo", "--planes"},
            new String[]{"bench", "raw", "--seconds", "1", "extra"}))
        {
            final CliTestSupport.Run run = CliTestSupport.run(args);
            final String err = run.err().strip();
            System.out.println(err);
            assertEquals(2, run.exitCode(), Arrays.toString(args) + ": " + err);
            assertEquals(1, err.lines().count(), Arrays.toString(args) + ": " + err);
            assertTrue(err.endsWith("--help lists the options"), err);
            assertFalse(err.contains("Usage") || run.out().contains("Usage"), err + run.out());
        }
    }
}
