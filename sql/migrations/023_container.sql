-- A job's container image and options (lib/container.h), as the user
-- gave them. NULL ctr_image: no container (a job from before too).
-- ctr_flags: 1 --container-writable, 2 --container-mount-home.
ALTER TABLE jobs ADD COLUMN ctr_image TEXT;
ALTER TABLE jobs ADD COLUMN ctr_mounts TEXT;
ALTER TABLE jobs ADD COLUMN ctr_workdir TEXT;
ALTER TABLE jobs ADD COLUMN ctr_env TEXT;
ALTER TABLE jobs ADD COLUMN ctr_name TEXT;
ALTER TABLE jobs ADD COLUMN ctr_flags INTEGER NOT NULL DEFAULT 0;
