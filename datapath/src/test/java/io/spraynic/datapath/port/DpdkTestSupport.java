package io.spraynic.datapath.port;

import io.spraynic.dpdk.Eal;
import io.spraynic.dpdk.EthPort;
import io.spraynic.dpdk.Mempool;
import org.junit.jupiter.api.Assumptions;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What the DPDK port tests share: EAL start-up (once per forked test JVM), port set-up, frame
 * bursts, and running system commands with a time bound.
 */
public final class DpdkTestSupport
{
    private static final ValueLayout.OfShort SHORT_BE =
        ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private DpdkTestSupport()
    {
    }

    /**
     * Starts EAL without hugepages or PCI, as everywhere in CI. Each test class runs in its own
     * JVM (surefire reuseForks=false), so each calls this once.
     */
    public static Eal initEal(final String testName)
    {
        return Eal.init(List.of(
            "spraynic-" + testName, "--no-huge", "-m", "512", "--no-pci", "-l", "0",
            "--file-prefix", "spraynic-" + testName + "-" + ProcessHandle.current().pid(),
            "--log-level", "lib.eal:notice"));
    }

    static Mempool createPool(final String name)
    {
        return Mempool.createPacketPool(name, 4095, 256, 2048 + 128, -1);
    }

    /**
     * Configures one RX and one TX queue, starts the port and returns its packet port.
     */
    public static DpdkPacketPort startSingleQueue(final EthPort port, final Mempool pool)
    {
        port.configure(1, 1);
        port.setupRxQueue(0, 1024, pool);
        port.setupTxQueue(0, 1024);
        port.start();
        return new DpdkPacketPort(port, 0, pool);
    }

    /**
     * Allocates {@code count} buffers on {@code port} and writes raw frames numbered from
     * {@code firstSequence}.
     */
    static void fill(final PacketPort port, final PacketBurst burst, final int count, final int length, final long firstSequence)
    {
        if (!port.allocate(burst, count))
        {
            throw new IllegalStateException("no buffers for " + count + " frames on " + port.name());
        }
        for (int i = burst.size() - count, sequence = 0; i < burst.size(); i++, sequence++)
        {
            RawFrames.write(burst.memory(), burst.offset(i), length, firstSequence + sequence);
            burst.length(i, length);
        }
    }

    /**
     * Polls until {@code count} packets arrived or the time is up.
     *
     * @return sequences received, in order; -1 for a frame that was not intact.
     */
    static long[] receive(final PacketPort port, final int count, final long timeoutMillis)
    {
        final PacketBurst burst = port.newBurst(32);
        final long[] sequences = new long[count];
        int received = 0;
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        try
        {
            while (received < count && System.nanoTime() < deadline)
            {
                if (port.receive(burst) == 0)
                {
                    Thread.onSpinWait();
                    continue;
                }
                for (int i = 0; i < burst.size() && received < count; i++)
                {
                    if (isRawFrame(burst, i)) // a kernel-facing port also receives the kernel's own traffic
                    {
                        sequences[received++] = RawFrames.verify(burst.memory(), burst.offset(i), burst.length(i));
                    }
                }
                port.release(burst);
            }
        }
        finally
        {
            port.release(burst);
            burst.close();
        }
        return Arrays.copyOf(sequences, received);
    }

    static boolean isRawFrame(final PacketBurst burst, final int index)
    {
        return burst.length(index) >= RawFrames.MIN_LENGTH &&
            Short.toUnsignedInt(burst.memory().get(SHORT_BE, burst.offset(index) + RawFrames.ETHER_TYPE_OFFSET)) ==
            RawFrames.ETHER_TYPE;
    }

    static boolean isRoot()
    {
        return "root".equals(System.getProperty("user.name"));
    }

    /**
     * Skips a test that needs root (network namespaces, veth, tap), saying so.
     */
    static void assumeRoot(final String what)
    {
        Assumptions.assumeTrue(isRoot(), "SKIPPED: " + what + " needs root (CI runs as root); user is " +
            System.getProperty("user.name"));
    }

    /**
     * Runs a command, bounded in time; fails with its output when it exits non-zero.
     */
    public static String run(final String... command)
    {
        return run(true, command);
    }

    /** {@link #run(String...)} inside network namespace {@code netns} ({@code ip netns exec}). */
    public static String runIn(final String netns, final String... command)
    {
        final String[] full = new String[command.length + 4];
        full[0] = "ip";
        full[1] = "netns";
        full[2] = "exec";
        full[3] = netns;
        System.arraycopy(command, 0, full, 4, command.length);
        return run(full);
    }

    /**
     * Runs a command, bounded in time (30 s, then it is killed); its output goes through a file, so a command that
     * prints much cannot block on a full pipe.
     *
     * @param check whether a non-zero exit or a time-out fails (else: clean-up, whatever comes of it).
     * @return its output, standard error included.
     */
    public static String run(final boolean check, final String... command)
    {
        Path output = null;
        try
        {
            output = Files.createTempFile("spraynic-command", ".out");
            final Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile())
                .start();
            if (!process.waitFor(30, TimeUnit.SECONDS))
            {
                process.destroyForcibly();
                if (!check)
                {
                    return "timed out";
                }
                throw new IllegalStateException("timed out: " + String.join(" ", command));
            }
            final String text = Files.readString(output, StandardCharsets.UTF_8);
            if (check && process.exitValue() != 0)
            {
                throw new IllegalStateException(String.join(" ", command) + " exited " + process.exitValue() + ": " + text);
            }
            return text;
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot run " + String.join(" ", command) + ": " + ex.getMessage(), ex);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
        finally
        {
            if (null != output)
            {
                output.toFile().delete();
            }
        }
    }

    static List<Long> sequenceList(final long first, final int count)
    {
        final List<Long> list = new ArrayList<>(count);
        for (int i = 0; i < count; i++)
        {
            list.add(first + i);
        }
        return list;
    }

    static List<Long> toList(final long[] values)
    {
        return Arrays.stream(values).boxed().toList();
    }

    /**
     * The kernel side of a test: {@code rawsock.py} sniffing or sending raw frames on an interface,
     * optionally inside a network namespace.
     */
    static final class KernelPeer implements AutoCloseable
    {
        private final Process process;
        private final BufferedReader output;

        private KernelPeer(final Process process)
        {
            this.process = process;
            this.output = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        }

        /**
         * Starts a sniffer and waits until its socket is bound.
         */
        static KernelPeer sniff(final String netns, final String iface, final int count, final int timeoutSeconds)
        {
            final KernelPeer peer = new KernelPeer(start(netns, "sniff", iface, Integer.toString(count),
                Integer.toString(timeoutSeconds)));
            final String first = peer.readLine();
            if (!"ready".equals(first))
            {
                peer.close();
                throw new IllegalStateException("sniffer on " + iface + " did not start: " + first);
            }
            return peer;
        }

        /**
         * Sends raw frames from the kernel side and waits for the sender to finish.
         */
        static void send(final String netns, final String iface, final int count, final int length, final long first)
        {
            try (KernelPeer peer = new KernelPeer(start(netns, "send", iface, Integer.toString(count),
                Integer.toString(length), Long.toString(first))))
            {
                final String line = peer.readLine();
                if (!("sent " + count).equals(line))
                {
                    throw new IllegalStateException("kernel-side send on " + iface + " failed: " + line);
                }
            }
        }

        /**
         * @return the sequences the sniffer saw, once it has seen its count or timed out.
         */
        List<Long> sequences()
        {
            final List<Long> sequences = new ArrayList<>();
            String line;
            while (null != (line = readLine()) && !line.startsWith("done"))
            {
                sequences.add(Long.parseLong(line.trim()));
            }
            return sequences;
        }

        private String readLine()
        {
            try
            {
                final String line = output.readLine();
                if (null == line && !process.isAlive() && process.exitValue() != 0)
                {
                    return "exit " + process.exitValue();
                }
                return line;
            }
            catch (final IOException ex)
            {
                throw new IllegalStateException(ex);
            }
        }

        private static Process start(final String netns, final String... arguments)
        {
            final List<String> command = new ArrayList<>();
            if (null != netns)
            {
                command.addAll(List.of("ip", "netns", "exec", netns));
            }
            command.add(Files.isExecutable(Path.of("/usr/bin/python3")) ? "/usr/bin/python3" : "python3");
            command.add(script().toString());
            command.addAll(List.of(arguments));
            try
            {
                return new ProcessBuilder(command).redirectErrorStream(true).start();
            }
            catch (final IOException ex)
            {
                throw new IllegalStateException("cannot start " + command + ": " + ex.getMessage(), ex);
            }
        }

        private static Path script()
        {
            try (InputStream in = DpdkTestSupport.class.getResourceAsStream("/port/rawsock.py"))
            {
                final Path file = Files.createTempFile("spraynic-rawsock", ".py");
                Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
                file.toFile().deleteOnExit();
                return file;
            }
            catch (final IOException ex)
            {
                throw new IllegalStateException(ex);
            }
        }

        public void close()
        {
            process.destroyForcibly();
        }
    }
}
