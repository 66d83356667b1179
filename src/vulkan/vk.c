/*
 * vk.c - the Vulkan device layer (vk.h): instance, device probe and pick, the logical device
 * with its queues and features (pvk_create: pick_device, scan_extensions, pick_queues,
 * make_device, make_pools, make_pipelines), buffers and the weights window, command buffers,
 * submission with fence polling, and dispatch recording with barriers. The debugging reports
 * (profiler, pipeline statistics) are vk_prof.c's.
 */
#include "vk.h"

_Static_assert(PVK_N_PIPELINES <= PVK_PROF_MAX_PIPES, "the profiler sizes its tables by this");

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_vulkan.h"
#include "shaders.h" /* generated: pvk_spv_<name>[] for every shaders/<name>.comp */

/* Every pipeline's SPIR-V, size and name, from the one table in vk.h. */
static const struct {
    const uint32_t *code;
    size_t size;
    const char *name;
    int optional;
} pipes[PVK_N_PIPELINES] = {
#define PVK_SPV_(id, name, opt) {pvk_spv_##name, sizeof pvk_spv_##name, #name, opt},
    PVK_PIPELINES(PVK_SPV_)
#undef PVK_SPV_
};

#define VK_TRY(call, what)                                                                         \
    do {                                                                                           \
        VkResult r_ = (call);                                                                      \
        if (r_ != VK_SUCCESS)                                                                      \
            return ptts_fail(e, PTTS_E_BACKEND, "Vulkan: %s failed (VkResult %d)", what, (int)r_); \
    } while (0)

static int make_instance(VkInstance *inst, ptts_error *e) {
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                             .pApplicationName = "pocket-tts-c",
                             .apiVersion = VK_API_VERSION_1_1};
    VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                               .pApplicationInfo = &app};
    /* Devices that implement Vulkan only in part (MoltenVK on Apple GPUs) are listed by the
     * loader only when the instance asks for them; such a device then needs
     * VK_KHR_portability_subset enabled (pvk_create). */
    static const char *portability = "VK_KHR_portability_enumeration";
    uint32_t n = 0;
    if (vkEnumerateInstanceExtensionProperties(NULL, &n, NULL) == VK_SUCCESS && n > 0) {
        VkExtensionProperties *ext = calloc(n, sizeof *ext);
        if (ext && vkEnumerateInstanceExtensionProperties(NULL, &n, ext) == VK_SUCCESS)
            for (uint32_t i = 0; i < n; i++)
                if (!strcmp(ext[i].extensionName, portability)) {
                    ci.flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
                    ci.enabledExtensionCount = 1;
                    ci.ppEnabledExtensionNames = &portability;
                }
        free(ext);
    }
    VkResult r = vkCreateInstance(&ci, NULL, inst);
    if (r != VK_SUCCESS)
        return ptts_fail(e, PTTS_E_BACKEND,
                         "Vulkan: no usable driver (vkCreateInstance returned %d); is a Vulkan "
                         "ICD installed (mesa-vulkan-drivers, the NVIDIA driver)?",
                         (int)r);
    return 0;
}

static int list_devices(VkInstance inst, VkPhysicalDevice **out, uint32_t *n, ptts_error *e) {
    *out = NULL;
    *n = 0;
    VK_TRY(vkEnumeratePhysicalDevices(inst, n, NULL), "vkEnumeratePhysicalDevices");
    if (*n == 0) return ptts_fail(e, PTTS_E_NOT_FOUND, "Vulkan: no device found");
    *out = calloc(*n, sizeof **out);
    if (!*out) return ptts_fail(e, PTTS_E_NOMEM, "out of memory");
    VK_TRY(vkEnumeratePhysicalDevices(inst, n, *out), "vkEnumeratePhysicalDevices");
    return 0;
}

const char *pvk_type_name(int type) {
    switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
    default: return "other";
    }
}

static void describe(VkPhysicalDevice pd, pvk_device_info *d) {
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(pd, &p);
    snprintf(d->name, sizeof d->name, "%s", p.deviceName);
    d->type = (int)p.deviceType;
    d->discrete = p.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    d->memory = 0;
    for (uint32_t h = 0; h < mp.memoryHeapCount; h++)
        if ((mp.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) &&
            mp.memoryHeaps[h].size > d->memory)
            d->memory = mp.memoryHeaps[h].size;
}

/* The probe's instance lives as long as the process (created once, never destroyed): listing
 * the devices at every model load then creates no instance, and the drivers stay loaded, so the
 * per-process state a driver sets up with its first instance (lavapipe allocates some in a
 * pthread_once) stays owned by a loaded driver rather than being dropped with it, which leak
 * checkers report as a leak of every process that loaded a model. pvk_create takes it first for
 * the same reason. */
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static VkInstance probe_inst;
static int probe_rc;
static ptts_error probe_err;

static void probe_init(void) { probe_rc = make_instance(&probe_inst, &probe_err); }

static int probe_instance(ptts_error *e) {
    pthread_once(&probe_once, probe_init);
    if (probe_rc && e) *e = probe_err;
    return probe_rc;
}

int pvk_probe(pvk_device_info *out, int max, ptts_error *e) {
    int rc = probe_instance(e);
    if (rc) return rc;
    VkPhysicalDevice *pd;
    uint32_t n;
    rc = list_devices(probe_inst, &pd, &n, e);
    int count = 0;
    for (uint32_t i = 0; !rc && i < n && count < max; i++)
        describe(pd[i], &out[count++]);
    free(pd);
    return rc ? rc : count;
}

/* "no such device" with the list, so that the user sees what to name instead. */
static int no_device(const pvk_device_info *d, int n, const char *want, ptts_error *e) {
    char list[768];
    size_t len = 0;
    list[0] = 0;
    for (int i = 0; i < n && len < sizeof list; i++) {
        int k = snprintf(list + len, sizeof list - len, "%s%d: %s (%s)", i ? "; " : "", i,
                         d[i].name, pvk_type_name(d[i].type));
        if (k < 0) break;
        len += (size_t)k;
    }
    return ptts_fail(e, PTTS_E_NOT_FOUND, "Vulkan: no device '%s' (%d found: %s)", want, n, list);
}

/* part occurs in name, in any case */
static int name_has(const char *name, const char *part) {
    for (const char *h = name; *h; h++) {
        size_t j = 0;
        while (part[j] && h[j] && tolower((unsigned char)h[j]) == tolower((unsigned char)part[j]))
            j++;
        if (!part[j]) return 1;
    }
    return 0;
}

int pvk_pick(const pvk_device_info *d, int n, const char *want, ptts_error *e) {
    if (!want || !*want) want = getenv("PTTS_VK_DEVICE");
    if (want && *want && strcmp(want, "auto") != 0) {
        char *end;
        long i = strtol(want, &end, 10);
        if (end != want && *end == 0) return i >= 0 && i < n ? (int)i : no_device(d, n, want, e);
        for (int k = 0; k < n; k++)
            if (name_has(d[k].name, want)) return k;
        return no_device(d, n, want, e);
    }
    for (int i = 0; i < n; i++)
        if (d[i].type == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) return i;
    for (int i = 0; i < n; i++)
        if (d[i].type == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU) return i;
    return n > 0 ? 0 : ptts_fail(e, PTTS_E_NOT_FOUND, "Vulkan: no device found");
}

/* Pipeline i from its embedded SPIR-V, with specialization constant 0 = xact when xact != 0
 * (the PVK_XELU variants). */
static VkResult make_pipe(pvk_ctx *c, int i, uint32_t xact, VkPipeline *out) {
    VkShaderModuleCreateInfo sm = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                   .codeSize = pipes[i].size,
                                   .pCode = pipes[i].code};
    VkShaderModule mod;
    VkResult r = vkCreateShaderModule(c->dev, &sm, NULL, &mod);
    if (r != VK_SUCCESS) return r;
    const VkSpecializationMapEntry me = {.constantID = 0, .offset = 0, .size = sizeof xact};
    const VkSpecializationInfo si = {
        .mapEntryCount = 1, .pMapEntries = &me, .dataSize = sizeof xact, .pData = &xact};
    VkComputePipelineCreateInfo cp = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = mod,
                  .pName = "main",
                  .pSpecializationInfo = xact ? &si : NULL},
        .layout = c->layout};
    if (c->pipe_stats && !xact) cp.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    r = vkCreateComputePipelines(c->dev, VK_NULL_HANDLE, 1, &cp, NULL, out);
    vkDestroyShaderModule(c->dev, mod, NULL);
    return r;
}

/* The tensor-core tiles, and with them the pipelines that need pvk_ctx.coop. */
static int is_tc(int i) { return i >= PVK_GEMM_TC_L && i <= PVK_GEMM_TCH_Q; }
static int needs_coop(int i) { return is_tc(i) || i == PVK_ATTN_TC; }

static int make_pipelines(pvk_ctx *c, ptts_error *e) {
    VkDescriptorSetLayoutBinding b[PVK_N_BINDINGS];
    for (int i = 0; i < PVK_N_BINDINGS; i++)
        b[i] = (VkDescriptorSetLayoutBinding){
            .binding = (uint32_t)i,
            .descriptorType = i == PVK_B_WEIGHTS ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC
                                                 : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            .descriptorCount = 1,
            .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
    VkDescriptorSetLayoutCreateInfo dl = {.sType =
                                              VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                          .bindingCount = PVK_N_BINDINGS,
                                          .pBindings = b};
    VK_TRY(vkCreateDescriptorSetLayout(c->dev, &dl, NULL, &c->dsl), "vkCreateDescriptorSetLayout");
    VkPushConstantRange pr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = 128};
    VkPipelineLayoutCreateInfo pl = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                     .setLayoutCount = 1,
                                     .pSetLayouts = &c->dsl,
                                     .pushConstantRangeCount = 1,
                                     .pPushConstantRanges = &pr};
    VK_TRY(vkCreatePipelineLayout(c->dev, &pl, NULL, &c->layout), "vkCreatePipelineLayout");
    VkDescriptorPoolSize ps[2] = {
        {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, (PVK_N_BINDINGS - 1) * PVK_KV_SETS},
        {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC, PVK_KV_SETS}};
    VkDescriptorPoolCreateInfo dp = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                     .maxSets = PVK_KV_SETS,
                                     .poolSizeCount = 2,
                                     .pPoolSizes = ps};
    VK_TRY(vkCreateDescriptorPool(c->dev, &dp, NULL, &c->dpool), "vkCreateDescriptorPool");
    VkDescriptorSetLayout dsls[PVK_KV_SETS];
    for (int i = 0; i < PVK_KV_SETS; i++)
        dsls[i] = c->dsl;
    VkDescriptorSetAllocateInfo da = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                      .descriptorPool = c->dpool,
                                      .descriptorSetCount = PVK_KV_SETS,
                                      .pSetLayouts = dsls};
    VK_TRY(vkAllocateDescriptorSets(c->dev, &da, c->set), "vkAllocateDescriptorSets");
    for (int i = 0; i < PVK_N_PIPELINES; i++) {
        /* stepk512 needs 24 KiB + 12 bytes an invocation of shared memory (lavapipe has 32 KiB)
         * and 512 invocations: left out (NULL) where the device lacks them */
        const uint32_t wgs = i == PVK_STEPK512 ? 512 : 0;
        if (needs_coop(i) && !c->coop) continue;
        if (i == PVK_ATTN_DEC && !c->shuffle8) continue;
        /* attn_tc.comp's shared memory (27,968 bytes: 64-key tiles, S, P, Q); NVIDIA's driver
         * made a 53 KiB variant over its 48 KiB limit without an error and lost the device */
        if (i == PVK_ATTN_TC && c->props.limits.maxComputeSharedMemorySize < 27968) continue;
        if (wgs > 0 && (c->props.limits.maxComputeSharedMemorySize < 24576 + 12 * wgs + 4096 ||
                        c->props.limits.maxComputeWorkGroupInvocations < wgs ||
                        c->props.limits.maxComputeWorkGroupSize[0] < wgs))
            continue;
        VkResult r = make_pipe(c, i, 0, &c->pipe[i]);
        if (r != VK_SUCCESS && pipes[i].optional) {
            c->pipe[i] = VK_NULL_HANDLE;
            continue;
        }
        if (r != VK_SUCCESS)
            return ptts_fail(e, PTTS_E_BACKEND, "Vulkan: pipeline %d failed (VkResult %d)", i,
                             (int)r);
        if (c->pipe_stats) pvk_prof_pipeline_stats(c->dev, c->pipe[i], pvk_pipe_name(i));
    }
    return 0;
}

/* attn_dec.comp's subgroups (vk.h: pvk_ctx.shuffle8). */
static int shuffle8_usable(pvk_ctx *c) {
    VkPhysicalDeviceSubgroupProperties sp = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                      .pNext = &sp};
    vkGetPhysicalDeviceProperties2(c->phys, &p2);
    const uint32_t n = sp.subgroupSize;
    return n >= 8 && n <= 128 && (n & (n - 1)) == 0 &&
           (sp.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
           (sp.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT);
}

/* The tensor-core GEMMs (gemm_tc.glsl) need: the cooperative-matrix, float16 and memory-model
 * features, a 16 x 16 x 16 float16 x float16 -> float32 subgroup product among the device's
 * cooperative-matrix shapes, and 32-invocation subgroups (the shaders' fragment layout). */
static int coop_usable(pvk_ctx *c, VkPhysicalDeviceCooperativeMatrixFeaturesNV *cmf,
                       VkPhysicalDeviceVulkanMemoryModelFeaturesKHR *mmf,
                       VkPhysicalDeviceShaderFloat16Int8FeaturesKHR *f16f) {
    mmf->pNext = cmf;
    f16f->pNext = mmf;
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                    .pNext = f16f};
    vkGetPhysicalDeviceFeatures2(c->phys, &f2);
    if (!cmf->cooperativeMatrix || !mmf->vulkanMemoryModel || !f16f->shaderFloat16) return 0;
    VkPhysicalDeviceSubgroupProperties sp = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                      .pNext = &sp};
    vkGetPhysicalDeviceProperties2(c->phys, &p2);
    if (sp.subgroupSize != 32 || !(sp.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT)) return 0;
    PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV get =
        (PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV)vkGetInstanceProcAddr(
            c->instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV");
    uint32_t n = 0;
    if (!get || get(c->phys, &n, NULL) != VK_SUCCESS || n == 0) return 0;
    VkCooperativeMatrixPropertiesNV *cp = calloc(n, sizeof *cp);
    if (!cp) return 0;
    for (uint32_t i = 0; i < n; i++)
        cp[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV;
    int ok = 0;
    if (get(c->phys, &n, cp) == VK_SUCCESS)
        for (uint32_t i = 0; i < n; i++)
            ok |= cp[i].MSize == 16 && cp[i].NSize == 16 && cp[i].KSize == 16 &&
                  cp[i].AType == VK_COMPONENT_TYPE_FLOAT16_NV &&
                  cp[i].BType == VK_COMPONENT_TYPE_FLOAT16_NV &&
                  cp[i].CType == VK_COMPONENT_TYPE_FLOAT32_NV &&
                  cp[i].DType == VK_COMPONENT_TYPE_FLOAT32_NV &&
                  cp[i].scope == VK_SCOPE_SUBGROUP_NV;
    free(cp);
    return ok;
}

/* The device `want` names (pvk_pick) as c->phys, with its properties. */
static int pick_device(pvk_ctx *c, const char *want, ptts_error *e) {
    VkPhysicalDevice *pd;
    uint32_t n;
    int rc = list_devices(c->instance, &pd, &n, e);
    if (rc) return rc;
    pvk_device_info info[PVK_MAX_DEVICES];
    int ni = 0;
    for (uint32_t i = 0; i < n && ni < PVK_MAX_DEVICES; i++, ni++)
        describe(pd[i], &info[ni]);
    int pick = pvk_pick(info, ni, want, e);
    if (pick >= 0) c->phys = pd[pick];
    free(pd);
    if (pick < 0) return pick;
    vkGetPhysicalDeviceProperties(c->phys, &c->props);
    vkGetPhysicalDeviceMemoryProperties(c->phys, &c->mem_props);
    return 0;
}

/* The device extensions that matter: the SM count (NVIDIA: how many workgroups a persistent
 * grid may hold), pipeline statistics (when asked for), the three the tensor-core gemms need
 * (*coop bits 1, 2, 4) and the portability subset (which must be enabled where offered). */
static void scan_extensions(pvk_ctx *c, int *coop, int *portability_subset) {
    uint32_t n = 0;
    *coop = *portability_subset = 0;
    vkEnumerateDeviceExtensionProperties(c->phys, NULL, &n, NULL);
    VkExtensionProperties *ext = n ? calloc(n, sizeof *ext) : NULL;
    if (ext && vkEnumerateDeviceExtensionProperties(c->phys, NULL, &n, ext) == VK_SUCCESS) {
        for (uint32_t i = 0; i < n; i++) {
            const char *x = ext[i].extensionName;
            if (!strcmp(x, "VK_NV_shader_sm_builtins")) {
                VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm = {
                    .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
                VkPhysicalDeviceProperties2 p2 = {
                    .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &sm};
                vkGetPhysicalDeviceProperties2(c->phys, &p2);
                c->sm_count = (int)sm.shaderSMCount;
            } else if (!strcmp(x, "VK_KHR_pipeline_executable_properties")) {
                c->pipe_stats = pvk_prof_stats_wanted();
            } else if (!strcmp(x, "VK_NV_cooperative_matrix")) {
                *coop |= 1;
            } else if (!strcmp(x, "VK_KHR_vulkan_memory_model")) {
                *coop |= 2;
            } else if (!strcmp(x, "VK_KHR_shader_float16_int8")) {
                *coop |= 4;
            } else if (!strcmp(x, "VK_KHR_portability_subset")) {
                *portability_subset = 1;
            }
        }
    }
    free(ext);
}

/* The first compute family, and a second queue for the codec (pvk_submit_pair runs it beside
 * the next step call): one of another compute family (on NVIDIA the compute-only family, which
 * the hardware schedules apart from the first), none where the device has no such family (the
 * pair then goes in one submission). A second queue of the first family was slower than
 * submitting apart on the H200 (bench/RESULTS.md). */
static int pick_queues(pvk_ctx *c, ptts_error *e) {
    uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(c->phys, &nq, NULL);
    VkQueueFamilyProperties qf[32];
    if (nq > 32) nq = 32;
    vkGetPhysicalDeviceQueueFamilyProperties(c->phys, &nq, qf);
    c->qfamily = c->qfamily2 = UINT32_MAX;
    for (uint32_t i = 0; i < nq && c->qfamily == UINT32_MAX; i++)
        if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) c->qfamily = i;
    if (c->qfamily == UINT32_MAX)
        return ptts_fail(e, PTTS_E_BACKEND, "Vulkan: %s has no compute queue", c->props.deviceName);
    for (uint32_t i = 0; i < nq; i++)
        if (i != c->qfamily && (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && qf[i].queueCount &&
            (c->qfamily2 == UINT32_MAX || !(qf[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)))
            c->qfamily2 = i;
    return 0;
}

/* The logical device with its queues, the extensions scan_extensions found useful and only the
 * features the shaders use. */
static int make_device(pvk_ctx *c, int coop, int portability_subset, ptts_error *e) {
    float prio[2] = {1.f, 1.f};
    VkDeviceQueueCreateInfo qis[2] = {{.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                       .queueFamilyIndex = c->qfamily,
                                       .queueCount = 1,
                                       .pQueuePriorities = prio},
                                      {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                       .queueFamilyIndex = c->qfamily2,
                                       .queueCount = 1,
                                       .pQueuePriorities = prio}};
    const char *exts[8];
    uint32_t nexts = 0;
    void *chain = NULL;
    if (portability_subset) exts[nexts++] = "VK_KHR_portability_subset";
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pef = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR,
        .pipelineExecutableInfo = VK_TRUE};
    if (c->pipe_stats) {
        exts[nexts++] = "VK_KHR_pipeline_executable_properties";
        chain = &pef;
    }
    VkPhysicalDeviceCooperativeMatrixFeaturesNV cmf = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
    VkPhysicalDeviceVulkanMemoryModelFeaturesKHR mmf = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES_KHR};
    VkPhysicalDeviceShaderFloat16Int8FeaturesKHR f16f = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR};
    if (coop == 7 && coop_usable(c, &cmf, &mmf, &f16f)) {
        c->coop = 1;
        exts[nexts++] = "VK_NV_cooperative_matrix";
        exts[nexts++] = "VK_KHR_vulkan_memory_model";
        exts[nexts++] = "VK_KHR_shader_float16_int8";
        cmf = (VkPhysicalDeviceCooperativeMatrixFeaturesNV){
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV,
            .pNext = chain,
            .cooperativeMatrix = VK_TRUE};
        mmf = (VkPhysicalDeviceVulkanMemoryModelFeaturesKHR){
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES_KHR,
            .pNext = &cmf,
            .vulkanMemoryModel = VK_TRUE};
        f16f = (VkPhysicalDeviceShaderFloat16Int8FeaturesKHR){
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR,
            .pNext = &mmf,
            .shaderFloat16 = VK_TRUE};
        chain = &f16f;
    }
    VkDeviceCreateInfo di = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                             .pNext = chain,
                             .queueCreateInfoCount = c->qfamily2 != UINT32_MAX ? 2 : 1,
                             .pQueueCreateInfos = qis,
                             .enabledExtensionCount = nexts,
                             .ppEnabledExtensionNames = exts};
    VkResult r = vkCreateDevice(c->phys, &di, NULL, &c->dev);
    if (r != VK_SUCCESS)
        return ptts_fail(e, PTTS_E_BACKEND, "Vulkan: vkCreateDevice failed (%d)", (int)r);
    vkGetDeviceQueue(c->dev, c->qfamily, 0, &c->queue);
    if (c->qfamily2 != UINT32_MAX) vkGetDeviceQueue(c->dev, c->qfamily2, 0, &c->queue2);
    return 0;
}

/* A command pool per queue family and a fence per queue. */
static int make_pools(pvk_ctx *c, ptts_error *e) {
    VkCommandPoolCreateInfo cp = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                  .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                  .queueFamilyIndex = c->qfamily};
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkCommandPoolCreateInfo cp2 = cp;
    cp2.queueFamilyIndex = c->qfamily2;
    if (vkCreateCommandPool(c->dev, &cp, NULL, &c->pool) != VK_SUCCESS ||
        (c->qfamily2 != UINT32_MAX &&
         vkCreateCommandPool(c->dev, &cp2, NULL, &c->pool2) != VK_SUCCESS) ||
        vkCreateFence(c->dev, &fi, NULL, &c->fence) != VK_SUCCESS ||
        vkCreateFence(c->dev, &fi, NULL, &c->fence2) != VK_SUCCESS)
        return ptts_fail(e, PTTS_E_BACKEND, "Vulkan: cannot create a command pool or fence");
    return 0;
}

int pvk_create(pvk_ctx *c, const char *want, ptts_error *e) {
    memset(c, 0, sizeof *c);
    int coop = 0, portability_subset = 0;
    int rc = probe_instance(e);
    if (!rc) rc = make_instance(&c->instance, e);
    if (!rc) rc = pick_device(c, want, e);
    if (!rc) scan_extensions(c, &coop, &portability_subset);
    if (!rc) c->shuffle8 = shuffle8_usable(c);
    if (!rc) rc = pick_queues(c, e);
    if (!rc) rc = make_device(c, coop, portability_subset, e);
    if (!rc) rc = make_pools(c, e);
    if (!rc) rc = make_pipelines(c, e);
    if (rc) {
        pvk_destroy(c);
        return rc;
    }
    pvk_prof_init(&c->pf, c->dev, c->props.limits.timestampPeriod, pvk_pipe_name, PVK_N_PIPELINES);
    return 0;
}

void pvk_destroy(pvk_ctx *c) {
    if (c->dev) {
        vkDeviceWaitIdle(c->dev);
        pvk_prof_destroy(&c->pf);
        for (int i = 0; i < PVK_N_PIPELINES; i++) {
            if (c->pipe[i]) vkDestroyPipeline(c->dev, c->pipe[i], NULL);
            if (c->pipe_x[i]) vkDestroyPipeline(c->dev, c->pipe_x[i], NULL);
        }
        if (c->dpool) vkDestroyDescriptorPool(c->dev, c->dpool, NULL);
        if (c->layout) vkDestroyPipelineLayout(c->dev, c->layout, NULL);
        if (c->dsl) vkDestroyDescriptorSetLayout(c->dev, c->dsl, NULL);
        if (c->fence) vkDestroyFence(c->dev, c->fence, NULL);
        if (c->fence2) vkDestroyFence(c->dev, c->fence2, NULL);
        if (c->pool) vkDestroyCommandPool(c->dev, c->pool, NULL);
        if (c->pool2) vkDestroyCommandPool(c->dev, c->pool2, NULL);
        vkDestroyDevice(c->dev, NULL);
    }
    if (c->instance) vkDestroyInstance(c->instance, NULL);
    memset(c, 0, sizeof *c);
}

static int find_memory(const pvk_ctx *c, uint32_t bits, VkMemoryPropertyFlags want) {
    for (uint32_t i = 0; i < c->mem_props.memoryTypeCount; i++)
        if ((bits & (1u << i)) && (c->mem_props.memoryTypes[i].propertyFlags & want) == want)
            return (int)i;
    return -1;
}

int pvk_buffer_create(pvk_ctx *c, pvk_buffer *b, VkDeviceSize size, int host, ptts_error *e) {
    return pvk_buffer_create_ex(c, b, size, host, 0, e);
}

int pvk_buffer_create_ex(pvk_ctx *c, pvk_buffer *b, VkDeviceSize size, int host, int windowed,
                         ptts_error *e) {
    memset(b, 0, sizeof *b);
    if (size == 0) size = 4;
    size = (size + 255) & ~(VkDeviceSize)255;
    if (!windowed && size > c->props.limits.maxStorageBufferRange)
        return ptts_fail(e, PTTS_E_NOMEM,
                         "Vulkan: a buffer of %.1f MiB exceeds the device's storage buffer range "
                         "(%.1f MiB) on %s",
                         size / 1048576.0, c->props.limits.maxStorageBufferRange / 1048576.0,
                         c->props.deviceName);
    VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                             .size = size,
                             .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                      VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                      VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                             .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    uint32_t fams[2] = {c->qfamily, c->qfamily2};
    if (c->qfamily2 != UINT32_MAX) { /* both queues' families use every buffer */
        bi.sharingMode = VK_SHARING_MODE_CONCURRENT;
        bi.queueFamilyIndexCount = 2;
        bi.pQueueFamilyIndices = fams;
    }
    VK_TRY(vkCreateBuffer(c->dev, &bi, NULL, &b->buf), "vkCreateBuffer");
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(c->dev, b->buf, &req);
    int mt = host ? find_memory(c, req.memoryTypeBits,
                                VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                    VK_MEMORY_PROPERTY_HOST_COHERENT_BIT |
                                    VK_MEMORY_PROPERTY_HOST_CACHED_BIT)
                  : find_memory(c, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (host && mt < 0)
        mt =
            find_memory(c, req.memoryTypeBits,
                        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    if (mt < 0) {
        pvk_buffer_destroy(c, b);
        return ptts_fail(e, PTTS_E_BACKEND, "Vulkan: no suitable memory type");
    }
    VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                               .allocationSize = req.size,
                               .memoryTypeIndex = (uint32_t)mt};
    VkResult r = vkAllocateMemory(c->dev, &ai, NULL, &b->mem);
    if (r != VK_SUCCESS) {
        pvk_buffer_destroy(c, b);
        return ptts_fail(e, PTTS_E_NOMEM, "Vulkan: cannot allocate %.1f MiB of %s memory (%d)",
                         size / 1048576.0, host ? "host-visible" : "device", (int)r);
    }
    vkBindBufferMemory(c->dev, b->buf, b->mem, 0);
    b->size = size;
    if (host && vkMapMemory(c->dev, b->mem, 0, VK_WHOLE_SIZE, 0, &b->map) != VK_SUCCESS) {
        pvk_buffer_destroy(c, b);
        return ptts_fail(e, PTTS_E_BACKEND, "Vulkan: vkMapMemory failed");
    }
    if (host) memset(b->map, 0, (size_t)size);
    return 0;
}

void pvk_buffer_destroy(pvk_ctx *c, pvk_buffer *b) {
    if (b->buf) vkDestroyBuffer(c->dev, b->buf, NULL);
    if (b->mem) vkFreeMemory(c->dev, b->mem, NULL);
    memset(b, 0, sizeof *b);
}

static void write_binding(pvk_ctx *c, int set, int binding, const VkDescriptorBufferInfo *bi) {
    VkWriteDescriptorSet w = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                              .dstSet = c->set[set],
                              .dstBinding = (uint32_t)binding,
                              .descriptorCount = 1,
                              .descriptorType = binding == PVK_B_WEIGHTS
                                                    ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC
                                                    : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                              .pBufferInfo = bi};
    vkUpdateDescriptorSets(c->dev, 1, &w, 0, NULL);
}

void pvk_bind(pvk_ctx *c, int binding, const pvk_buffer *b) {
    VkDescriptorBufferInfo bi = {.buffer = b->buf, .offset = 0, .range = b->size};
    if (binding == PVK_B_WEIGHTS) {
        /* a window of at most the device's storage buffer range, moved per dispatch */
        VkDeviceSize max = c->props.limits.maxStorageBufferRange & ~(VkDeviceSize)255;
        c->wsize = b->size;
        c->wrange = b->size < max ? b->size : max;
        c->wbase = 0;
        bi.range = c->wrange;
    }
    for (int i = 0; i < PVK_KV_SETS; i++)
        write_binding(c, i, binding, &bi);
}

void pvk_bind_kv(pvk_ctx *c, int n, const pvk_buffer *k, const pvk_buffer *v) {
    for (int i = 0; i < PVK_KV_SETS; i++) {
        const int j = i < n ? i : 0;
        VkDescriptorBufferInfo bk = {.buffer = k[j].buf, .offset = 0, .range = k[j].size};
        VkDescriptorBufferInfo bv = {.buffer = v[j].buf, .offset = 0, .range = v[j].size};
        write_binding(c, i, PVK_B_KC, &bk);
        write_binding(c, i, PVK_B_VC, &bv);
    }
}

void pvk_kv_window(pvk_ctx *c, int i) { c->kvset = i >= 0 && i < PVK_KV_SETS ? i : 0; }

VkDeviceSize pvk_weights_window(pvk_ctx *c, VkDeviceSize lo, VkDeviceSize hi) {
    if (c->wrange >= c->wsize) return c->wbase = 0; /* the whole buffer is visible */
    VkDeviceSize align = c->props.limits.minStorageBufferOffsetAlignment;
    if (align < 16) align = 16; /* vec4 views stay aligned */
    VkDeviceSize base = lo & ~(align - 1);
    if (base + c->wrange > c->wsize) base = (c->wsize - c->wrange) & ~(align - 1);
    if (hi > base + c->wrange || lo < base) c->wfail = 1;
    return c->wbase = base;
}

static void bind_set(pvk_ctx *c, VkCommandBuffer cb) {
    uint32_t off = (uint32_t)c->wbase;
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, c->layout, 0, 1, &c->set[c->kvset],
                            1, &off);
    c->bound_wbase = c->wbase;
    c->bound_kvset = c->kvset;
}

VkCommandBuffer pvk_cmd_begin(pvk_ctx *c, ptts_error *e) { return pvk_cmd_begin_q(c, 0, e); }

VkCommandBuffer pvk_cmd_begin_q(pvk_ctx *c, int q, ptts_error *e) {
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = q && c->pool2 ? c->pool2 : c->pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    VkCommandBuffer cb;
    if (vkAllocateCommandBuffers(c->dev, &ai, &cb) != VK_SUCCESS) {
        ptts_fail(e, PTTS_E_BACKEND, "Vulkan: cannot allocate a command buffer");
        return VK_NULL_HANDLE;
    }
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    vkBeginCommandBuffer(cb, &bi);
    c->wbase = 0;
    c->wfail = 0;
    c->kvset = 0;
    bind_set(c, cb);
    pvk_prof_begin(&c->pf, cb);
    return cb;
}

int pvk_cmd_end(pvk_ctx *c, VkCommandBuffer cb, ptts_error *e) {
    VK_TRY(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
    if (c->wfail)
        return ptts_fail(e, PTTS_E_UNSUPPORTED,
                         "Vulkan: the weights one dispatch reads span more than the device's "
                         "storage buffer range (%.1f MiB) on %s",
                         c->wrange / 1048576.0, c->props.deviceName);
    if (c->xfail)
        return ptts_fail(e, PTTS_E_BACKEND, "Vulkan: a pipeline variant could not be made on %s",
                         c->props.deviceName);
    return 0;
}

/* Wait for n fences and reset them: polled for up to spin_us microseconds (polling instead of
 * sleeping in the driver shortens a frame on a discrete GPU, bench/RESULTS.md), then a
 * blocking wait. */
static VkResult wait_fences(pvk_ctx *c, uint32_t n, const VkFence *f) {
    VkResult r = VK_NOT_READY;
    if (c->spin_us > 0) {
        double t0 = ptts_now();
        uint32_t i = 0;
        while (i < n && (r = vkGetFenceStatus(c->dev, f[i])) != VK_ERROR_DEVICE_LOST) {
            if (r == VK_SUCCESS)
                i++;
            else if ((ptts_now() - t0) * 1e6 > c->spin_us)
                break;
        }
        if (i < n && r != VK_ERROR_DEVICE_LOST) r = VK_NOT_READY;
    }
    if (r == VK_NOT_READY) r = vkWaitForFences(c->dev, n, f, VK_TRUE, UINT64_MAX);
    vkResetFences(c->dev, n, f);
    return r;
}

int pvk_submit_wait(pvk_ctx *c, VkCommandBuffer cb, ptts_error *e) {
    return pvk_submit_wait_q(c, cb, 0, e);
}

int pvk_submit_wait_q(pvk_ctx *c, VkCommandBuffer cb, int q, ptts_error *e) {
    VkSubmitInfo si = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
    VkQueue qu = q && c->queue2 ? c->queue2 : c->queue;
    VkFence f = q && c->queue2 ? c->fence2 : c->fence;
    VK_TRY(vkQueueSubmit(qu, 1, &si, f), "vkQueueSubmit");
    VkResult r = wait_fences(c, 1, &f);
    if (r != VK_SUCCESS)
        return ptts_fail(e, PTTS_E_BACKEND, "Vulkan: waiting for the GPU failed (%d)", (int)r);
    pvk_prof_collect(&c->pf, cb);
    return 0;
}

int pvk_submit_pair(pvk_ctx *c, VkCommandBuffer a, VkCommandBuffer b, ptts_error *e) {
    VkResult r;
    if (c->queue2 && b) {
        VkSubmitInfo sa = {
            .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &b};
        VkSubmitInfo sb = sa;
        sb.pCommandBuffers = &a;
        VK_TRY(vkQueueSubmit(c->queue2, 1, &sa, c->fence2), "vkQueueSubmit");
        r = vkQueueSubmit(c->queue, 1, &sb, c->fence);
        if (r != VK_SUCCESS) { /* b is in flight: wait for it before reporting */
            wait_fences(c, 1, &c->fence2);
            return ptts_fail(e, PTTS_E_BACKEND, "Vulkan: vkQueueSubmit failed (%d)", (int)r);
        }
    } else {
        VkCommandBuffer both[2] = {a, b};
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .commandBufferCount = b ? 2 : 1,
                           .pCommandBuffers = both};
        VK_TRY(vkQueueSubmit(c->queue, 1, &si, c->fence), "vkQueueSubmit");
    }
    c->fly_a = a;
    c->fly_b = b;
    return 0;
}

int pvk_wait_pair(pvk_ctx *c, ptts_error *e) {
    if (!c->fly_a) return 0;
    VkFence f[2] = {c->fence, c->fence2};
    VkResult r = wait_fences(c, c->queue2 && c->fly_b ? 2 : 1, f);
    VkCommandBuffer a = c->fly_a, b = c->fly_b;
    c->fly_a = c->fly_b = VK_NULL_HANDLE;
    if (r != VK_SUCCESS)
        return ptts_fail(e, PTTS_E_BACKEND, "Vulkan: waiting for the GPU failed (%d)", (int)r);
    pvk_prof_collect(&c->pf, a);
    if (b) pvk_prof_collect(&c->pf, b);
    return 0;
}

void pvk_cmd_free(pvk_ctx *c, VkCommandBuffer cb) { pvk_cmd_free_q(c, cb, 0); }

void pvk_cmd_free_q(pvk_ctx *c, VkCommandBuffer cb, int q) {
    if (!cb) return;
    pvk_prof_forget(&c->pf, cb); /* a later buffer may reuse the handle */
    vkFreeCommandBuffers(c->dev, q && c->pool2 ? c->pool2 : c->pool, 1, &cb);
}

static void barrier(VkCommandBuffer cb) {
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask =
                              VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                           VK_ACCESS_TRANSFER_READ_BIT |
                                           VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_READ_BIT};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT |
                             VK_PIPELINE_STAGE_HOST_BIT,
                         0, 1, &mb, 0, NULL, 0, NULL);
}

void pvk_skip_barrier(pvk_ctx *c) { c->skip_barrier = 1; }

int pvk_make_xelu(pvk_ctx *c, ptts_error *e) {
    for (int i = 0; i < PVK_N_PIPELINES; i++) {
        const int lin = is_tc(i) || i == PVK_LINEAR || i == PVK_GEMM || i == PVK_MGEMM ||
                        i == PVK_SKINNY || i == PVK_GEMM_L || i == PVK_GEMM_R64 ||
                        i == PVK_GEMM_R32;
        if (!lin || !c->pipe[i] || c->pipe_x[i]) continue; /* a tile the device lacks */
        if (make_pipe(c, i, 3u, &c->pipe_x[i]) != VK_SUCCESS) {
            c->pipe_x[i] = VK_NULL_HANDLE;
            return ptts_fail(e, PTTS_E_BACKEND,
                             "Vulkan: a pipeline variant could not be made on %s",
                             c->props.deviceName);
        }
    }
    return 0;
}

void pvk_dispatch(pvk_ctx *c, VkCommandBuffer cb, int pipe, const void *pc, uint32_t bytes,
                  uint32_t gx, uint32_t gy, uint32_t gz) {
    if (gx == 0 || gy == 0 || gz == 0) return;
    VkPipeline pl = c->pipe[pipe & ~PVK_XELU];
    if (pipe & PVK_XELU) {
        pipe &= ~PVK_XELU;
        if (!c->pipe_x[pipe] && make_pipe(c, pipe, 3u, &c->pipe_x[pipe]) != VK_SUCCESS) {
            c->pipe_x[pipe] = VK_NULL_HANDLE;
            c->xfail = 1;
            return;
        }
        pl = c->pipe_x[pipe];
    }
    if (c->wbase != c->bound_wbase || c->kvset != c->bound_kvset) bind_set(c, cb);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pl);
    vkCmdPushConstants(cb, c->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, bytes, pc);
    vkCmdDispatch(cb, gx, gy, gz);
    if (c->skip_barrier)
        c->skip_barrier = 0;
    else
        barrier(cb);
    pvk_prof_dispatch(&c->pf, cb, pipe, gx, gy);
}

void pvk_dispatch_flat(pvk_ctx *c, VkCommandBuffer cb, int pipe, const void *pc, uint32_t bytes,
                       uint64_t items) {
    uint64_t groups = (items + 255) / 256;
    if (groups == 0) return;
    uint32_t gx = groups < 65535 ? (uint32_t)groups : 65535u;
    uint32_t gy = (uint32_t)((groups + gx - 1) / gx);
    pvk_dispatch(c, cb, pipe, pc, bytes, gx, gy, 1);
}

void pvk_fill(VkCommandBuffer cb, const pvk_buffer *dst, VkDeviceSize off, VkDeviceSize bytes,
              uint32_t value) {
    vkCmdFillBuffer(cb, dst->buf, off, bytes, value);
    barrier(cb);
}

void pvk_copy(VkCommandBuffer cb, const pvk_buffer *src, VkDeviceSize so, const pvk_buffer *dst,
              VkDeviceSize dof, VkDeviceSize bytes) {
    VkBufferCopy r = {.srcOffset = so, .dstOffset = dof, .size = bytes};
    vkCmdCopyBuffer(cb, src->buf, dst->buf, 1, &r);
    barrier(cb);
}

const char *pvk_pipe_name(int i) { return i >= 0 && i < PVK_N_PIPELINES ? pipes[i].name : "?"; }

/* ---- engine_vulkan.h and ptts.h: the devices for backend selection and listing ---------- */

int ptts_vulkan_probe(const char *want, char *name, size_t name_size, int *discrete,
                      ptts_error *e) {
    pvk_device_info d[PVK_MAX_DEVICES];
    int n = pvk_probe(d, PVK_MAX_DEVICES, e);
    if (n < 0) return n;
    int i = pvk_pick(d, n, want, e);
    if (i < 0) return i;
    if (name && name_size) snprintf(name, name_size, "%s", d[i].name);
    if (discrete) *discrete = d[i].discrete;
    return 0;
}

int ptts_gpu_devices(ptts_gpu_device *out, int max, ptts_error *e) {
    pvk_device_info d[PVK_MAX_DEVICES];
    int n = pvk_probe(d, PVK_MAX_DEVICES, e);
    if (n < 0) return n;
    ptts_error pe = {0};
    int pick = pvk_pick(d, n, NULL, &pe); /* PTTS_VK_DEVICE, else the first discrete GPU... */
    for (int i = 0; i < n && i < max; i++) {
        _Static_assert(sizeof out[i].name == sizeof d[i].name, "device name sizes");
        memcpy(out[i].name, d[i].name, sizeof out[i].name);
        out[i].name[sizeof out[i].name - 1] = 0;
        out[i].kind = pvk_type_name(d[i].type);
        out[i].memory = d[i].memory;
        out[i].picked = i == pick;
    }
    return n < max ? n : max;
}
