package io.spraynic.dpdk;

/**
 * What a port's driver reports about itself ({@code rte_eth_dev_info}).
 */
public record DeviceInfo(
    String driverName,
    int maxRxQueues,
    int maxTxQueues,
    int minMtu,
    int maxMtu,
    int rxDescriptorsMin,
    int rxDescriptorsMax,
    int txDescriptorsMin,
    int txDescriptorsMax)
{
}
