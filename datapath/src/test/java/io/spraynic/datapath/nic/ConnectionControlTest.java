package io.spraynic.datapath.nic;

import io.spraynic.pmd.InterfaceAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetAddress;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

@Timeout(10)
class ConnectionControlTest
{
    @Test
    void shouldMapIpv4PeersIntoIpv6()
    {
        final int a = 0x0A00_0001;
        final int b = 0xC0A8_0102;
        final long[][] mapped = ConnectionControl.addresses(new int[]{a, b});
        assertArrayEquals(new long[]{0, 0}, mapped[0]);
        assertArrayEquals(new long[]{InterfaceAddress.mappedLow(a), InterfaceAddress.mappedLow(b)}, mapped[1]);
    }

    @Test
    void shouldTakeEitherFamilyAndMapIpv4TheSameWay() throws Exception
    {
        final long[][] peers = ConnectionControl.addresses(new InetAddress[]{
            InetAddress.getByName("192.168.1.2"), InetAddress.getByName("fd00::1:2")});
        final long[][] mapped = ConnectionControl.addresses(new int[]{0xC0A8_0102});
        assertArrayEquals(new long[]{mapped[0][0], 0xFD00_0000_0000_0000L}, peers[0]);
        assertArrayEquals(new long[]{mapped[1][0], 0x0000_0000_0001_0002L}, peers[1]);
    }
}
