/* nvtx_program — a program annotated with NVTX and nothing else (no
 * libpipeprof), for tests/inject/test_nvtx.sh. Every range it makes is
 * listed there with what the trace must show for it. */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static void spin_us(long us) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

static nvtxRangeId_t request;

/* Ends the range the main thread started, and has a range of its own. */
static void *worker(void *arg) {
    (void)arg;
    nvtxRangePushA("worker");
    spin_us(100);
    nvtxRangeEnd(request);
    nvtxRangePop();
    return NULL;
}

static nvtxEventAttributes_t attributes(void) {
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    return a;
}

int main(void) {
    /* nesting: inner inside outer on the main thread */
    nvtxRangePushA("outer");
    nvtxRangePushA("inner");
    spin_us(50);
    nvtxRangePop();
    nvtxRangePop();

    /* a named category and an integer payload */
    nvtxNameCategoryA(7, "io");
    nvtxEventAttributes_t a = attributes();
    a.category = 7;
    a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
    a.payload.llValue = 42;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "load";
    nvtxRangePushEx(&a);
    nvtxRangePop();

    /* a domain with its own category and a registered string */
    nvtxDomainHandle_t d = nvtxDomainCreateA("pipeline");
    nvtxDomainNameCategoryA(d, 1, "compute");
    nvtxStringHandle_t s = nvtxDomainRegisterStringA(d, "registered");
    a = attributes();
    a.category = 1;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = s;
    nvtxDomainRangePushEx(d, &a);
    nvtxDomainRangePop(d);

    /* marks: plain, and in the domain */
    nvtxMarkA("checkpoint");
    nvtxDomainMarkEx(d, &a);

    /* a wide-character message */
    nvtxRangePushW(L"wide \u00fc");
    nvtxRangePop();

    /* a range started here and ended on another thread */
    request = nvtxRangeStartA("request");
    pthread_t th;
    if (pthread_create(&th, NULL, worker, NULL) != 0)
        return 1;
    pthread_join(th, NULL);

    /* a two-stage pipeline, four batches, named for --batch-pattern */
    for (int b = 0; b < 4; b++) {
        char name[32];
        snprintf(name, sizeof name, "prep/batch%d", b);
        nvtxRangePushA(name);
        spin_us(200);
        nvtxRangePop();
        snprintf(name, sizeof name, "embed/batch%d", b);
        nvtxRangePushA(name);
        spin_us(b == 2 ? 900 : 400);
        nvtxRangePop();
    }
    return 0;
}
