/*
 * The receiving side of Agrona's broadcast buffer (docs/IPC.md, The broadcast), written from its definition: one
 * transmitter (the NIC) writes records (int length including the 8-byte header, int type, body; 8-aligned, a
 * padding record of type -1 over the end) without waiting for anyone; before it writes, it stores the tail it is
 * about to reach in the tail-intent counter, after it wrote it stores the record's position in the latest counter
 * and the new tail in the tail counter (release). A receiver copies a record and then checks that the transmitter's
 * intent has not come within one capacity of it: else the copy may be torn and it was lapped.
 *
 * Anyone who can write nic.ctl can write the broadcast: a record whose length cannot be real makes this receiver
 * skip to the tail instead of reading outside it. It only ever carries refusals, so the worst is a lost one.
 */
#include "internal.h"

int sn_broadcast_init(sn_broadcast *receiver, uint8_t *memory, int64_t length)
{
    const int64_t capacity = length - SN_BROADCAST_TRAILER_LENGTH;
    if (capacity < 64 || capacity > (1 << 30) || (capacity & (capacity - 1)) != 0 || ((uintptr_t)memory & 7) != 0)
    {
        return sn_fail(SN_ERR_CORRUPT, "a broadcast buffer of %lld B is not a power of two and a %d B trailer",
            (long long)length, SN_BROADCAST_TRAILER_LENGTH);
    }
    receiver->base = memory;
    receiver->capacity = (int32_t)capacity;
    /* as Agrona's receiver: only what is transmitted from now on */
    receiver->next = sn_load_acquire_i64(memory + capacity + SN_BROADCAST_TAIL_OFFSET);
    return SN_OK;
}

static int64_t counter(const sn_broadcast *receiver, int32_t offset)
{
    return sn_load_acquire_i64(receiver->base + receiver->capacity + offset);
}

int sn_broadcast_receive(sn_broadcast *receiver, sn_record_handler handler, void *context)
{
    const int32_t capacity = receiver->capacity;
    uint8_t copy[SN_MAX_ANSWER_LENGTH];
    for (int hops = 0; hops < 2; hops++) /* at most a padding record, then the record at the start */
    {
        const int64_t tail = counter(receiver, SN_BROADCAST_TAIL_OFFSET);
        const int64_t cursor = receiver->next;
        if (tail <= cursor)
        {
            if (tail < cursor)
            {
                receiver->next = tail; /* a tail that went back: nothing real to read */
            }
            return 0;
        }
        if (tail - cursor > capacity || cursor + capacity <= counter(receiver, SN_BROADCAST_TAIL_INTENT_OFFSET))
        {
            receiver->next = tail; /* lapped: what was here is overwritten */
            return 0;
        }
        const int32_t offset = (int32_t)(cursor & (capacity - 1));
        const int32_t length = sn_get_i32(receiver->base + offset);
        const int32_t type = sn_get_i32(receiver->base + offset + 4);
        if (length < SN_RECORD_HEADER_LENGTH || length > capacity - offset)
        {
            receiver->next = tail;
            return 0;
        }
        const int32_t body = length - SN_RECORD_HEADER_LENGTH;
        const int32_t copied = body < (int32_t)sizeof copy ? body : (int32_t)sizeof copy;
        memcpy(copy, receiver->base + offset + SN_RECORD_HEADER_LENGTH, (size_t)copied);
        atomic_thread_fence(memory_order_acquire);
        if (cursor + capacity <= counter(receiver, SN_BROADCAST_TAIL_INTENT_OFFSET))
        {
            receiver->next = tail; /* lapped while copying: the copy may be torn */
            return 0;
        }
        receiver->next = cursor + sn_align8(length);
        if (SN_PADDING_TYPE == type)
        {
            continue;
        }
        if (type > 0)
        {
            handler(context, type, copy, copied);
        }
        return 1;
    }
    return 0;
}
