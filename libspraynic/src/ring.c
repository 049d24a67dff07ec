/*
 * Agrona's ring buffer layout (docs/IPC.md, Rings), written from its definition: records of an 8-byte header
 * (int length including the header, int type) and a body, each starting at a multiple of 8; a record never wraps,
 * a padding record (type -1) fills the end instead; a trailer after the data area holds the tail (producers), the
 * head cache (producers), the head (consumer) and the correlation counter, each on its own pair of cache lines.
 *
 * Producers claim with a compare-and-set on the tail, so any number of processes may write (the NIC's command ring
 * has many); a claim shows as a negative length until its commit stores the positive one with release semantics.
 * The consumer reads a length with acquire semantics, zeroes what it consumed, then stores the new head.
 *
 * The other side is not trusted: the producer computes every index from its own tail masked by the capacity; the
 * consumer keeps its own head, checks each record header against the room to the end of the ring and the longest
 * message before touching the body, and copies the body before handing it over.
 */
#include "internal.h"

static uint8_t *trailer(const sn_ring *ring, int32_t offset)
{
    return ring->base + ring->capacity + offset;
}

int sn_ring_init(sn_ring *ring, uint8_t *memory, int64_t length, int32_t max_message)
{
    const int64_t capacity = length - SN_RING_TRAILER_LENGTH;
    if (capacity < 64 || capacity > (1 << 30) || (capacity & (capacity - 1)) != 0 || ((uintptr_t)memory & 7) != 0)
    {
        return sn_fail(SN_ERR_CORRUPT, "a ring of %lld B is not a power of two and a %d B trailer", (long long)length,
            SN_RING_TRAILER_LENGTH);
    }
    ring->base = memory;
    ring->capacity = (int32_t)capacity;
    ring->max_message = max_message;
    ring->head = sn_load_acquire_i64(trailer(ring, SN_RING_HEAD_OFFSET)) & ~(int64_t)7;
    return SN_OK;
}

int32_t sn_ring_claim(sn_ring *ring, int32_t type, int32_t length)
{
    if (type <= 0 || length < 0 || length > ring->max_message)
    {
        return SN_ERR_INVALID;
    }
    const int32_t required = sn_align8(length + SN_RECORD_HEADER_LENGTH);
    const int32_t capacity = ring->capacity;
    const int32_t mask = capacity - 1;
    _Atomic int64_t *tail_position = (_Atomic int64_t *)(void *)trailer(ring, SN_RING_TAIL_OFFSET);
    uint8_t *head_position = trailer(ring, SN_RING_HEAD_OFFSET);
    uint8_t *head_cache = trailer(ring, SN_RING_HEAD_CACHE_OFFSET);
    int64_t head = sn_load_acquire_i64(head_cache);
    int64_t tail;
    int64_t new_tail;
    int32_t padding;
    int32_t write_index;
    int32_t tail_index;
    do
    {
        tail = atomic_load_explicit(tail_position, memory_order_acquire);
        if (tail < 0 || head < 0 || (tail & 7) != 0 || head > tail)
        {
            /* the ring is shared with the NIC and other clients: positions no producer writes (misaligned, below 0,
             * a head past the tail) would give misaligned atomics, records over the trailer, or overflowed sums */
            head = sn_load_acquire_i64(head_position);
            if (tail < 0 || head < 0 || (tail & 7) != 0 || head > tail)
            {
                return sn_fail(SN_ERR_CORRUPT, "a ring holds a tail of %lld and a head of %lld, which no producer writes",
                    (long long)tail, (long long)head);
            }
        }
        if (required > capacity - (tail - head))
        {
            head = sn_load_acquire_i64(head_position);
            if (required > capacity - (tail - head))
            {
                return SN_ERR_QUEUE_FULL;
            }
            sn_store_release_i64(head_cache, head);
        }
        padding = 0;
        tail_index = (int32_t)(tail & mask);
        write_index = tail_index;
        new_tail = tail + required;
        const int32_t to_end = capacity - tail_index;
        if (required > to_end)
        {
            /* the record goes to the start, after a padding record over the end: the start must be free */
            int32_t head_index = (int32_t)(head & mask);
            if (required > head_index)
            {
                head = sn_load_acquire_i64(head_position);
                head_index = (int32_t)(head & mask);
                if (required > head_index)
                {
                    return SN_ERR_QUEUE_FULL;
                }
                sn_store_release_i64(head_cache, head);
            }
            padding = to_end;
            new_tail += padding;
            write_index = 0;
        }
    }
    while (!atomic_compare_exchange_weak_explicit(tail_position, &tail, new_tail, memory_order_acq_rel,
        memory_order_acquire));
    if (0 != padding)
    {
        sn_store_release_i32(ring->base + tail_index, -padding);
        sn_put_i32(ring->base + tail_index + 4, SN_PADDING_TYPE);
        sn_store_release_i32(ring->base + tail_index, padding);
    }
    sn_store_release_i32(ring->base + write_index, -(length + SN_RECORD_HEADER_LENGTH));
    atomic_thread_fence(memory_order_release);
    sn_put_i32(ring->base + write_index + 4, type);
    return write_index + SN_RECORD_HEADER_LENGTH;
}

void sn_ring_commit(sn_ring *ring, int32_t index)
{
    uint8_t *length = ring->base + index - SN_RECORD_HEADER_LENGTH;
    sn_store_release_i32(length, -sn_get_i32(length));
}

int sn_ring_write(sn_ring *ring, int32_t type, const uint8_t *body, int32_t length)
{
    const int32_t index = sn_ring_claim(ring, type, length);
    if (index < 0)
    {
        return index;
    }
    memcpy(ring->base + index, body, (size_t)length);
    sn_ring_commit(ring, index);
    return SN_OK;
}

int sn_ring_read(sn_ring *ring, sn_record_handler handler, void *context, int limit)
{
    const int32_t capacity = ring->capacity;
    const int64_t start = ring->head;
    uint8_t copy[SN_MAX_ANSWER_LENGTH];
    int records = 0;
    int result = SN_OK;
    while (records < limit)
    {
        const int32_t index = (int32_t)(ring->head & (capacity - 1));
        const int32_t room = capacity - index;
        const int32_t length = sn_load_acquire_i32(ring->base + index);
        if (length <= 0)
        {
            if (length < 0 && (length == INT32_MIN || -length < SN_RECORD_HEADER_LENGTH || -length > room))
            {
                result = sn_fail(SN_ERR_CORRUPT, "the NIC's ring holds a claim of %lld B at %d (room %d)",
                    -(long long)length, index, room);
            }
            break; /* empty, or claimed and not committed yet */
        }
        if (length < SN_RECORD_HEADER_LENGTH || length > room)
        {
            result = sn_fail(SN_ERR_CORRUPT, "the NIC's ring holds a record of %d B at %d (room %d)", length, index,
                room);
            break;
        }
        const int32_t type = sn_get_i32(ring->base + index + 4);
        const int32_t body = length - SN_RECORD_HEADER_LENGTH;
        if (SN_PADDING_TYPE != type)
        {
            if (type <= 0 || body > ring->max_message || body > (int32_t)sizeof copy)
            {
                result = sn_fail(SN_ERR_CORRUPT, "the NIC's ring holds a record of type %d and %d B at %d", type, body,
                    index);
                break;
            }
            memcpy(copy, ring->base + index + SN_RECORD_HEADER_LENGTH, (size_t)body);
            if (!handler(context, type, copy, body))
            {
                break;
            }
            records++;
        }
        const int32_t aligned = sn_align8(length); /* room is a multiple of 8: still inside */
        memset(ring->base + index, 0, (size_t)aligned);
        ring->head += aligned;
    }
    if (ring->head != start)
    {
        sn_store_release_i64(trailer(ring, SN_RING_HEAD_OFFSET), ring->head);
    }
    return SN_OK == result ? records : result;
}
