--[[
job_submit.lua: coloc's transparent bind mode. In a bind partition Slurm counts GPU slots (the
count-only GRES `gpuslot`) and colocd chooses the physical GPUs, so a job must ask for slots.
This script rewrites a GPU request in such a partition, --gres=gpu:N, --gpus=N,
--gpus-per-node=N, --gpus-per-task=N, --gpus-per-socket=N (and --cpus-per-gpu, --mem-per-gpu),
into the same number of slots, so that users keep their scripts. A GPU type (gpu:a100:2)
is dropped: in a bind partition the nodes decide the type. Jobs in other partitions pass
untouched. See spank_coloc(8), "Bind mode without changing job scripts".

It also copies the profile the plugin tagged the job with (--coloc-profile, SPANK_COLOC_PROFILE)
into the job's AdminComment as `coloc_profile=NAME`, so that colocd knows what a pending job is
before it starts (elastic slots, colocd.yaml(5)). An AdminComment a site set is left alone.

And it gates admission (colocd.yaml(5), `admission:`): a job in a bind partition that asks for
GPU slots and has a time limit gets a BeginTime GATE_S seconds ahead and the word coloc_gate in
its AdminComment. It pends (Reason BeginTime) until colocd weighs it by the sharing rule and
releases it (BeginTime now, and its node list set to the node colocd chose) or holds it a lease
longer. When colocd is away nobody renews the lease and the job starts by itself GATE_S seconds
late. A job that sets its own --begin, runs with --coloc=off, or whose AdminComment a site set,
is not gated.

Standing offers: colocd writes, after each round, the GPUs a job submitted now may take at once
(colocd.yaml(5), admission.offers_file: OFFERS_FILE below, on the host that runs slurmctld). A
one-node job that would be gated and fits an offer is not gated: its node list is set to the
offer's node and coloc_offer is added to its AdminComment, and Slurm starts it at once, as it
would without coloc. Each offer is taken once. No file, or one colocd stopped renewing: every
job is gated.

Install: copy it beside slurm.conf as job_submit.lua, set JobSubmitPlugins=lua in slurm.conf,
list your bind partitions below (those colocd.yaml gives `mode: bind`), and run
`scontrol reconfigure`. slurmctld rereads this file when it changes.
]]

-- The partitions in bind mode (colocd.yaml `partitions: NAME: { mode: bind }`).
local bind_partitions = { "shared" }

local SLOT = "gpuslot"

-- How long a gated job waits for colocd's first verdict at most (colocd renews its own leases).
local GATE_S = 30

-- colocd's standing offers (colocd.yaml admission.offers_file); the same path on both sides.
local OFFERS_FILE = "/run/coloc/offers"

local is_bind = {}
for _, p in ipairs(bind_partitions) do is_bind[p] = true end

-- The partitions a job goes to: those it names, else the default one.
local function partitions_of(job_desc, part_list)
    local names = {}
    if job_desc.partition ~= nil and job_desc.partition ~= "" then
        for p in string.gmatch(job_desc.partition, "[^,]+") do table.insert(names, p) end
    else
        for name, part in pairs(part_list or {}) do
            if part.flag_default == 1 then table.insert(names, name) end
        end
    end
    return names
end

-- "gres:gpu:2" or "gres/gpu:a100:2" -> "gres:gpuslot:2"; other items stay. A GPU item without a
-- count means one.
local function to_slots(tres)
    if tres == nil or tres == "" then return tres, false end
    local out, changed = {}, false
    for item in string.gmatch(tres, "[^,]+") do
        local prefix, rest = string.match(item, "^(gres[:/])gpu(.*)$")
        if prefix ~= nil and (rest == "" or string.sub(rest, 1, 1) == ":") then
            local count = string.match(rest, ":(%d+)$") or "1"
            table.insert(out, prefix .. SLOT .. ":" .. count)
            changed = true
        elseif string.match(item, "^gpu[:=]") or item == "gpu" then
            -- cpus_per_tres/mem_per_tres write "gpu:4" or "gres:gpu:4" by release
            table.insert(out, SLOT .. string.sub(item, 4))
            changed = true
        else
            table.insert(out, item)
        end
    end
    return table.concat(out, ","), changed
end

local FIELDS = { "tres_per_node", "tres_per_job", "tres_per_task", "tres_per_socket", "cpus_per_tres",
                 "mem_per_tres" }

local function map_gpus(job_desc, part_list)
    local names = partitions_of(job_desc, part_list)
    if #names == 0 then return end
    for _, p in ipairs(names) do
        -- A job that may also run outside bind mode keeps its GPU request: Slurm allocates
        -- real GPUs there, and colocd narrows within them.
        if not is_bind[p] then return end
    end
    local mapped = {}
    for _, field in ipairs(FIELDS) do
        local value, changed = to_slots(job_desc[field])
        if changed then
            job_desc[field] = value
            table.insert(mapped, field .. "=" .. value)
        end
    end
    if #mapped > 0 then
        slurm.log_info("coloc: job of uid %s in bind partition %s asks for GPU slots: %s",
                       tostring(job_desc.user_id), table.concat(names, ","), table.concat(mapped, " "))
    end
end

-- The plugin's tag in the job's SPANK environment -> AdminComment "coloc_profile=NAME".
local function tag_profile(job_desc)
    local env = job_desc.spank_job_env
    if env == nil then return end
    local current = job_desc.admin_comment
    if current ~= nil and current ~= "" and string.match(current, "^coloc_profile=") == nil then return end
    for _, v in pairs(env) do
        local name = string.match(tostring(v), "^SPANK_COLOC_PROFILE=(.+)$") or
                     string.match(tostring(v), "^COLOC_PROFILE=(.+)$")
        if name ~= nil then
            job_desc.admin_comment = "coloc_profile=" .. name
            return
        end
    end
end

local function asks_for_slots(job_desc)
    for _, field in ipairs(FIELDS) do
        local v = job_desc[field]
        if v ~= nil and string.find(v, SLOT, 1, true) ~= nil then return true end
    end
    return false
end

local function has_time_limit(job_desc)
    local t = job_desc.time_limit
    return t ~= nil and t ~= slurm.NO_VAL and t ~= slurm.INFINITE and t > 0
end

-- ---- standing offers --------------------------------------------------------------------

-- Offers taken since colocd's read of the queue that the file rests on: {node, gpus, at}. They
-- count against the file's offers until a later read (as_of) shows their jobs to colocd.
local taken = {}

-- The offers in force: {as_of, expires, list = {{node, gpus}...}}, nil when none.
local function read_offers()
    local f = io.open(OFFERS_FILE, "r")
    if f == nil then return nil end
    local o = { list = {} }
    for line in f:lines() do
        local key, value = string.match(line, "^(%a[%a_]*) (%d+)$")
        if key == "as_of" or key == "expires" then o[key] = tonumber(value) end
        local node, gpus = string.match(line, "^offer (%S+) (%d+)$")
        if node ~= nil then table.insert(o.list, { node = node, gpus = tonumber(gpus) }) end
    end
    f:close()
    if o.as_of == nil or o.expires == nil or os.time() > o.expires then return nil end
    return o
end

-- Whether `name` is in a Slurm host list ("ALL", "n1,n2", "n[1-4,7]", "gpu[01-16]"). A form it
-- does not read counts as not in it (the job is then gated, as without offers).
local function in_hostlist(list, name)
    if list == nil or list == "" then return false end
    if list == "ALL" then return true end
    local items, depth, start = {}, 0, 1
    for i = 1, #list do
        local c = string.sub(list, i, i)
        if c == "[" then depth = depth + 1 elseif c == "]" then depth = depth - 1
        elseif c == "," and depth == 0 then
            table.insert(items, string.sub(list, start, i - 1))
            start = i + 1
        end
    end
    table.insert(items, string.sub(list, start))
    for _, item in ipairs(items) do
        if item == name then return true end
        local prefix, ranges, suffix = string.match(item, "^([^%[]*)%[([%d,%-]+)%]([^%[]*)$")
        if prefix ~= nil and #name > #prefix + #suffix and string.sub(name, 1, #prefix) == prefix and
            string.sub(name, #name - #suffix + 1) == suffix then
            local digits = string.sub(name, #prefix + 1, #name - #suffix)
            local n = string.match(digits, "^%d+$") and tonumber(digits)
            for range in string.gmatch(ranges, "[^,]+") do
                local lo, hi = string.match(range, "^(%d+)%-(%d+)$")
                lo = lo or range
                hi = hi or range
                -- zero-padded ranges (01-16) name nodes of that width only
                local width_ok = string.sub(lo, 1, 1) ~= "0" or #digits == #lo
                if n and width_ok and n >= tonumber(lo) and n <= tonumber(hi) then return true end
            end
        end
    end
    return false
end

local function unset(v) return v == nil or v == slurm.NO_VAL or v == 0 end

-- The GPU slots a one-node job asks for, when its request is that simple: nil otherwise.
local function one_node_slots(job_desc)
    if not (unset(job_desc.min_nodes) or job_desc.min_nodes == 1) then return nil end
    if not (unset(job_desc.max_nodes) or job_desc.max_nodes == 1) then return nil end
    for _, field in ipairs({ "tres_per_job", "tres_per_task", "tres_per_socket" }) do
        local v = job_desc[field]
        if v ~= nil and string.find(v, SLOT, 1, true) ~= nil then return nil end
    end
    local count = string.match(job_desc.tres_per_node or "", "^gres[:/]" .. SLOT .. ":(%d+)$")
    return count and tonumber(count)
end

-- Gives a job about to be gated a standing offer's node when one fits it; true when it did.
local function take_offer(job_desc, part_list, names)
    if #names ~= 1 or part_list == nil or part_list[names[1]] == nil then return false end
    if not (job_desc.req_nodes == nil or job_desc.req_nodes == "") then return false end
    if not (job_desc.exc_nodes == nil or job_desc.exc_nodes == "") then return false end
    local gpus = one_node_slots(job_desc)
    if gpus == nil or gpus < 1 then return false end
    local offers = read_offers()
    if offers == nil then return false end
    local still = {}
    for _, t in ipairs(taken) do
        if t.at >= offers.as_of then table.insert(still, t) end
    end
    taken = still
    local part_nodes = part_list[names[1]].nodes
    for _, o in ipairs(offers.list) do
        local left = o.gpus
        for _, t in ipairs(taken) do
            if t.node == o.node then left = left - t.gpus end
        end
        if left >= gpus and in_hostlist(part_nodes, o.node) then
            job_desc.req_nodes = o.node
            table.insert(taken, { node = o.node, gpus = gpus, at = os.time() })
            return true
        end
    end
    return false
end

-- A bind job with slots and a time limit pends until colocd releases it (or GATE_S passes),
-- unless it takes a standing offer.
local function gate(job_desc, part_list)
    local names = partitions_of(job_desc, part_list)
    if #names == 0 then return end
    for _, p in ipairs(names) do
        if not is_bind[p] then return end
    end
    if not asks_for_slots(job_desc) or not has_time_limit(job_desc) then return end
    if job_desc.begin_time ~= nil and job_desc.begin_time ~= 0 then return end
    -- Only jobs the plugin tagged (tag_profile above): --coloc=off, and a site's AdminComment,
    -- leave a job to Slurm alone.
    local current = job_desc.admin_comment
    if current == nil or string.match(current, "^coloc_profile=") == nil then return end
    local ok, offered = pcall(take_offer, job_desc, part_list, names)
    if ok and offered then
        job_desc.admin_comment = current .. " coloc_offer"
        slurm.log_info("coloc: job of uid %s takes colocd's standing offer on %s", tostring(job_desc.user_id),
                       job_desc.req_nodes)
        return
    end
    job_desc.begin_time = os.time() + GATE_S
    job_desc.admin_comment = current .. " coloc_gate"
end

function slurm_job_submit(job_desc, part_list, submit_uid)
    map_gpus(job_desc, part_list)
    tag_profile(job_desc)
    gate(job_desc, part_list)
    return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
    map_gpus(job_desc, part_list)
    return slurm.SUCCESS
end

return slurm.SUCCESS
