package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.verbs.AccessFlags;
import org.agrona.concurrent.AtomicBuffer;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;

/**
 * A hostile local process for {@link IpcAttackerProcessTest}: it connects to the NIC as a client, then on each line
 * of stdin does one thing no honest client does, and says on stdout when it did it.
 * <pre>
 *   FORGE victimId victimConnectionId  a DEREGISTER in the victim's name with a guessed token, and a
 *                                      CLOSE_CONNECTION in its own name naming the victim's connection
 *   CORRUPT-OWN                        a queue pair of its own whose request ring gets a record length 0x7FFFFFFF
 *   CORRUPT-CTL                        a record length 0x7FFFFFFF where the next command goes in nic.ctl
 *   CLAIM                              a claim on nic.ctl never committed; then it waits to be killed (kill -9)
 *   FLOOD lkey seconds                 a queue pair of its own whose request ring it fills as fast as it can with
 *                                      requests naming another client's lkey, memory outside its region, opcodes
 *                                      and record types no client writes, never reading a completion; says
 *                                      FLOODING, then FLOODED and the records it wrote
 *   HOARD n                            n CREATE_QUEUE_PAIRs on the command ring, in its own name, whose rings it
 *                                      never collects (no OPEN_MEMORY), not waiting for their answers; says HOARDED
 * </pre>
 * Usage: {@code IpcAttackerMain <ipc dir>}.
 */
public final class IpcAttackerMain
{
    private IpcAttackerMain()
    {
    }

    public static void main(final String[] args) throws Throwable
    {
        final Path dir = Path.of(args[0]);
        final NicClient client = NicClient.connect(dir, Duration.ofSeconds(20));
        final RawControlFile raw = new RawControlFile(dir);
        say("CLIENT " + client.clientId());
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while (null != (line = in.readLine()))
        {
            final String[] words = line.trim().split(" ");
            switch (words[0])
            {
                case "FORGE" ->
                {
                    final long victim = Long.parseLong(words[1]);
                    final long victimConnection = Long.parseLong(words[2]);
                    long guess = new SecureRandom().nextLong();
                    if (guess == 0)
                    {
                        guess = 1;
                    }
                    raw.objectCommand(IpcMessages.DEREGISTER, victim, guess, 1);
                    raw.objectCommand(IpcMessages.CLOSE_CONNECTION, client.clientId(), client.token(), victimConnection);
                    say("FORGED");
                }
                case "SOCKET-GARBAGE" ->
                {
                    // garbage on the NIC's socket, memory it must not map, and a truncation of a sealed region
                    final int rounds = Integer.parseInt(words[1]);
                    int refused = 0;
                    for (int round = 0; round < rounds; round++)
                    {
                        CommandSocketAttackTest.sendGarbage(dir, client);
                        final int unsealed = RawDescriptors.memfd(4096, 0);
                        try
                        {
                            client.registerMemory(unsealed, 4096, AccessFlags.LOCAL_WRITE);
                        }
                        catch (final NicRefusedException expected)
                        {
                            refused++;
                        }
                        finally
                        {
                            UnixSockets.close(unsealed);
                        }
                    }
                    final ClientRegion sealed = client.register(4096, AccessFlags.LOCAL_WRITE);
                    say("SOCKET-GARBAGED " + refused + " " + UnixSockets.truncate(sealed.fd(), 0));
                }
                case "CORRUPT-OWN" ->
                {
                    final ClientConnection qp = client.createQueuePair(0);
                    final AtomicBuffer ring = qp.rings().requests().buffer();
                    ring.putInt(4, ConnectionRings.SEND_REQUEST);
                    ring.putIntRelease(0, 0x7FFF_FFFF);
                    say("CORRUPTED-OWN");
                }
                case "CORRUPT-CTL" ->
                {
                    raw.corruptNextRecord(0x7FFF_FFFF);
                    say("CORRUPTED-CTL");
                }
                case "CLAIM" ->
                {
                    say("CLAIMED " + raw.claimAndAbandon());
                    Thread.sleep(600_000); // killed here, between claim and commit
                }
                case "FLOOD" ->
                {
                    final ClientRegion own = client.register(4096, 0);
                    final org.agrona.concurrent.ringbuffer.OneToOneRingBuffer ring =
                        client.createQueuePair(0).rings().requests();
                    final int foreignLkey = Integer.parseInt(words[1]);
                    final long end = System.nanoTime() + (long)(Double.parseDouble(words[2]) * 1e9);
                    final org.agrona.concurrent.UnsafeBuffer[] records = {
                        ClientRequestRingAttackTest.record(1, 1, 1, foreignLkey, own.address(), 64, 0, 0, 0),
                        ClientRequestRingAttackTest.record(2, 1, 1, own.lkey(), own.address() + 4000, 4096, 0, 0, 0),
                        ClientRequestRingAttackTest.record(3, 0x7F, 0xFF, own.lkey(), own.address(), 64, 9, 0, 0),
                        ClientRequestRingAttackTest.record(4, 1, 1, own.lkey(), own.address(), -5, 0, 0, 0)};
                    say("FLOODING");
                    long written = 0;
                    while (System.nanoTime() < end)
                    {
                        final int type = written % 5 == 4 ? 99 : ConnectionRings.SEND_REQUEST;
                        if (ring.write(type, records[(int)(written % 4)], 0, ConnectionRings.WR_LENGTH))
                        {
                            written++;
                        }
                    }
                    say("FLOODED " + written);
                }
                case "HOARD" ->
                {
                    final int count = Integer.parseInt(words[1]);
                    for (int i = 0; i < count; i++)
                    {
                        while (!raw.command(IpcMessages.CREATE_QUEUE_PAIR, client.clientId(), client.token(),
                            IpcMessages.Connect.LENGTH)) // timeout 0, plane 0: a queue pair on plane 0
                        {
                            Thread.onSpinWait();
                        }
                    }
                    say("HOARDED " + count);
                }
                default -> say("UNKNOWN " + line);
            }
        }
    }

    private static void say(final String line)
    {
        System.out.println(line);
        System.out.flush();
    }
}
