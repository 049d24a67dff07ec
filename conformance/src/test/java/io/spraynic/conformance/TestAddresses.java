package io.spraynic.conformance;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/**
 * Loopback addresses of this test process's own: {@code 127.<net>.<pid>} (the pid's low 16 bits), so that test JVMs
 * running side by side never share one, and each test names its end points by a second octet of its own.
 */
final class TestAddresses
{
    private static final long PID = ProcessHandle.current().pid();

    private TestAddresses()
    {
    }

    /** @return {@code 127.net.(pid >> 8).(pid)}, port {@code base + pid % 20,000}. */
    static InetSocketAddress loopback(final int net, final int base)
    {
        try
        {
            return new InetSocketAddress(InetAddress.getByName("127." + net + "." + (PID >> 8 & 0xFF) + "." + (PID & 0xFF)),
                base + (int)(PID % 20_000));
        }
        catch (final UnknownHostException ex)
        {
            throw new IllegalStateException(ex); // a literal address is never looked up
        }
    }
}
