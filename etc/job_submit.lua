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

Install: copy it beside slurm.conf as job_submit.lua, set JobSubmitPlugins=lua in slurm.conf,
list your bind partitions below (those colocd.yaml gives `mode: bind`), and run
`scontrol reconfigure`. slurmctld rereads this file when it changes.
]]

-- The partitions in bind mode (colocd.yaml `partitions: NAME: { mode: bind }`).
local bind_partitions = { "shared" }

local SLOT = "gpuslot"

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

function slurm_job_submit(job_desc, part_list, submit_uid)
    map_gpus(job_desc, part_list)
    tag_profile(job_desc)
    return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
    map_gpus(job_desc, part_list)
    return slurm.SUCCESS
end

return slurm.SUCCESS
