/*
 * Registered regions (docs/IPC.md, I7): this process makes a memfd of the region's bytes, sealed so that nobody can
 * shrink or grow it, maps it, and sends it with REGISTER on the NIC's socket; the NIC checks the seals, maps it,
 * registers it and answers REGION_READY with its keys and the NIC-side virtual address. What the NIC places there
 * this process sees at once.
 */
#include "internal.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

struct sn_region_node
{
    sn_mr mr; /* first: an sn_mr * is a node * */
    struct sn_region_node *next;
};

static void unlink_node(sn_nic *nic, struct sn_region_node *node)
{
    for (struct sn_region_node **at = &nic->regions; NULL != *at; at = &(*at)->next)
    {
        if (*at == node)
        {
            *at = node->next;
            return;
        }
    }
}

int sn_reg_mr(sn_nic *nic, uint64_t length, uint32_t access, sn_mr **out)
{
    const uint32_t all = SN_ACCESS_LOCAL_WRITE | SN_ACCESS_REMOTE_WRITE | SN_ACCESS_REMOTE_READ | SN_ACCESS_REMOTE_ATOMIC;
    if (NULL == nic || NULL == out || 0 == length || length > INT64_MAX || 0 != (access & ~all))
    {
        return sn_fail(SN_ERR_INVALID, "sn_reg_mr needs a NIC, a result pointer, a length > 0 and known access flags");
    }
    struct sn_region_node *node = calloc(1, sizeof *node);
    if (NULL == node)
    {
        return sn_fail(SN_ERR_NO_MEMORY, "no memory for a region");
    }
    uint8_t *memory = NULL;
    const int memory_fd = sn_sealed_memory(length, &memory);
    if (memory_fd < 0)
    {
        free(node);
        return memory_fd;
    }
    uint8_t command[SN_REGISTER_SIZE] = {0};
    sn_put_i64(command + SN_REGISTER_LENGTH, (int64_t)length);
    sn_put_i32(command + SN_REGISTER_ACCESS, (int32_t)access);
    pthread_mutex_lock(&nic->lock);
    int result = nic->closing ? sn_fail(SN_ERR_INVALID_STATE, "the NIC handle is closing") :
        sn_command_with_memory(nic, SN_CMD_REGISTER, command, sizeof command, 10000, memory_fd);
    close(memory_fd); /* the mappings (this one and the NIC's) keep the memory */
    if (result >= 0)
    {
        const uint8_t *reply = nic->reply;
        const uint64_t address = (uint64_t)sn_get_i64(reply + SN_REGION_ADDRESS);
        if (SN_ANS_REGION_READY != result || nic->reply_length < SN_REGION_FILE + 4 ||
            (uint64_t)sn_get_i64(reply + SN_REGION_LENGTH) != length || address + length < address)
        {
            result = sn_fail(SN_ERR_CORRUPT, "the NIC answered REGISTER of %llu B with a type %d answer of %d B",
                (unsigned long long)length, result, nic->reply_length);
        }
        else
        {
            node->mr = (sn_mr){.local = memory, .addr = address, .length = length,
                .lkey = (uint32_t)sn_get_i32(reply + SN_REGION_LKEY),
                .rkey = (uint32_t)sn_get_i32(reply + SN_REGION_RKEY),
                .access = (uint32_t)sn_get_i32(reply + SN_REGION_ACCESS),
                .id = (uint64_t)sn_get_i64(reply + SN_REGION_ID), .nic = nic};
            node->next = nic->regions;
            nic->regions = node;
            result = SN_OK;
        }
    }
    pthread_mutex_unlock(&nic->lock);
    if (SN_OK != result)
    {
        munmap(memory, (size_t)length);
        free(node);
        return result;
    }
    *out = &node->mr;
    return SN_OK;
}

int sn_dereg_mr(sn_mr *mr)
{
    if (NULL == mr)
    {
        return sn_fail(SN_ERR_INVALID, "sn_dereg_mr(NULL)");
    }
    sn_nic *nic = mr->nic;
    uint8_t command[SN_OBJECT_SIZE] = {0};
    sn_put_i64(command + SN_OBJECT_ID, (int64_t)mr->id);
    pthread_mutex_lock(&nic->lock);
    const int answer = sn_command(nic, SN_CMD_DEREGISTER, command, sizeof command, 10000);
    struct sn_region_node *node = (struct sn_region_node *)mr;
    unlink_node(nic, node);
    pthread_mutex_unlock(&nic->lock);
    munmap(mr->local, (size_t)mr->length); /* whatever the NIC answered: this view goes */
    free(node);
    return answer < 0 ? answer : SN_OK;
}

void *sn_mr_ptr(const sn_mr *mr, uint64_t addr)
{
    if (NULL == mr || addr < mr->addr || addr - mr->addr >= mr->length)
    {
        return NULL;
    }
    return (uint8_t *)mr->local + (addr - mr->addr);
}

void sn_regions_release_all(sn_nic *nic)
{
    while (NULL != nic->regions)
    {
        struct sn_region_node *node = nic->regions;
        nic->regions = node->next;
        munmap(node->mr.local, (size_t)node->mr.length);
        free(node);
    }
}
