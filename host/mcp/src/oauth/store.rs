//! The token store: one JSON file per key under `<config dir>/mcp-oauth/`, mode 0600 in a 0700
//! folder, replaced atomically (temp file + rename), holding rmcp's stored credentials (with the
//! time the token was received: refresh never fires without it) plus what rmcp does not keep
//! (the client secret, rust-sdk#784), the redirect URI, the resource, the authorization server's
//! metadata and the digest of the definition the tokens were issued for.
//!
//! A token is keyed by (scope, project, server name, canonical URL): a changed URL, a same-named
//! server in another layer or another project never receives it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::transport::auth::{
    AuthError, AuthorizationMetadata, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::settings::Layer;

/// What a token is issued for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenKey {
    /// `user`, `project` or `local`.
    pub scope: String,
    /// The project root, for project and local servers (none for the user's own).
    pub project: Option<String>,
    /// The server's name.
    pub server: String,
    /// Its canonical URL.
    pub url: String,
}

impl TokenKey {
    /// The key of `server` at `url`, defined in `layer` (of the project at `project_root`).
    pub fn new(layer: Layer, project_root: Option<&Path>, server: &str, url: &str) -> TokenKey {
        TokenKey {
            scope: layer.as_str().to_string(),
            project: match layer {
                Layer::User => None,
                Layer::Project | Layer::Local => {
                    project_root.map(|root| root.to_string_lossy().into_owned())
                }
            },
            server: server.to_string(),
            url: canonical_url(url),
        }
    }

    /// The file name's stem: a hash of the whole key (names and URLs never reach the file system).
    fn stem(&self) -> String {
        let material = serde_json::to_string(self).expect("keys serialise");
        hex::encode(&Sha256::digest(material.as_bytes())[..16])
    }
}

/// `url` with its scheme and host lower-cased, its default port and fragment dropped (what the
/// `url` crate's parser gives); the text as given when it does not parse.
pub fn canonical_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            parsed.set_fragment(None);
            parsed.to_string()
        }
        Err(_) => url.to_string(),
    }
}

/// A client registered with an authorization server (by dynamic registration), kept so that a
/// later login reuses it and a restarted process can still authenticate its refreshes.
#[derive(Clone, Serialize, Deserialize)]
pub struct Registration {
    /// The authorization server's issuer.
    pub issuer: Option<String>,
    /// The client id it issued.
    pub client_id: String,
    /// The secret it issued, if any.
    pub client_secret: Option<String>,
    /// The redirect URI it was registered with (a login reuses the registration only on it).
    #[serde(default)]
    pub redirect_uri: String,
}

/// Everything stored for one key.
#[derive(Clone, Serialize, Deserialize)]
pub struct TokenRecord {
    /// The key, checked on every read (a file under another key's name is ignored).
    pub key: TokenKey,
    /// rmcp's credentials: client id, token response, granted scopes, received-at, issuer.
    pub credentials: Option<StoredCredentials>,
    /// The client secret used with these tokens (rmcp does not store it).
    pub client_secret: Option<String>,
    /// The redirect URI of the login.
    pub redirect_uri: String,
    /// The resource the tokens are for (RFC 8707).
    pub resource: String,
    /// The authorization server's metadata, so that a session refreshes without discovery.
    pub metadata: Option<AuthorizationMetadata>,
    /// A dynamically registered client, reused by the next login with the same issuer.
    pub registration: Option<Registration>,
    /// The digest of the definition (URL and `oauth` block) the tokens were issued for.
    pub definition_digest: String,
    /// Scopes a server asked for (a 403 `insufficient_scope`) that no login has granted yet: the
    /// next `earshot mcp login` asks for them too.
    #[serde(default)]
    pub wanted_scopes: Vec<String>,
}

impl std::fmt::Debug for TokenRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenRecord")
            .field("key", &self.key)
            .field("credentials", &self.credentials)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[REDACTED]"),
            )
            .field("redirect_uri", &self.redirect_uri)
            .finish_non_exhaustive()
    }
}

/// The longest a process waits for another to finish with a server's tokens.
pub const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(90);

/// The folder of token files.
#[derive(Debug, Clone)]
pub struct TokenStore {
    dir: PathBuf,
}

impl TokenStore {
    /// The store under the user's config dir.
    pub fn in_config_dir(config_dir: &Path) -> TokenStore {
        TokenStore {
            dir: config_dir.join("mcp-oauth"),
        }
    }

    /// The file holding `key`'s record.
    pub fn path_of(&self, key: &TokenKey) -> PathBuf {
        self.dir.join(format!("{}.json", key.stem()))
    }

    fn lock_path_of(&self, key: &TokenKey) -> PathBuf {
        self.dir.join(format!("{}.lock", key.stem()))
    }

    /// `key`'s record, if there is one for exactly this key.
    ///
    /// # Errors
    /// A file that cannot be read or is not a record.
    pub fn read(&self, key: &TokenKey) -> Result<Option<TokenRecord>, String> {
        let path = self.path_of(key);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(format!("could not read {}: {error}", path.display())),
        };
        let record: TokenRecord = serde_json::from_slice(&bytes).map_err(|error| {
            format!(
                "{} is not a token record ({error}); run earshot mcp logout {} and log in again",
                path.display(),
                key.server
            )
        })?;
        Ok((record.key == *key).then_some(record))
    }

    /// Replaces `record` atomically: the file is complete or absent, never half-written, and
    /// only the user can read it.
    ///
    /// # Errors
    /// The folder or file cannot be written.
    pub fn write(&self, record: &TokenRecord) -> Result<(), String> {
        self.create_dir()?;
        let failed = |error: std::io::Error| {
            format!(
                "could not write a token file in {}: {error}",
                self.dir.display()
            )
        };
        let mut file = tempfile::NamedTempFile::new_in(&self.dir).map_err(failed)?;
        restrict(file.path(), 0o600).map_err(failed)?;
        let text = serde_json::to_vec_pretty(record).expect("records serialise");
        file.write_all(&text).map_err(failed)?;
        file.as_file().sync_all().map_err(failed)?;
        file.persist(self.path_of(&record.key))
            .map_err(|error| failed(error.error))?;
        Ok(())
    }

    /// Deletes `key`'s record; whether there was one.
    ///
    /// # Errors
    /// The file exists and cannot be removed.
    pub fn remove(&self, key: &TokenKey) -> Result<bool, String> {
        let path = self.path_of(key);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(error) => Err(format!("could not remove {}: {error}", path.display())),
        }
    }

    /// Waits (at most [`LOCK_WAIT`]) for the cross-process lock of `key`, held across a refresh
    /// and its save, a login's write and a logout, so two sessions never both spend one rotating
    /// refresh token and a refresh never brings back tokens a logout deleted. Released when
    /// dropped. Blocking: call it off the async threads.
    ///
    /// # Errors
    /// The lock file cannot be created, or another process held the lock too long.
    pub fn lock(&self, key: &TokenKey) -> Result<std::fs::File, String> {
        self.create_dir()?;
        let path = self.lock_path_of(key);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|error| format!("could not open {}: {error}", path.display()))?;
        let _ = restrict(&path, 0o600);
        let deadline = std::time::Instant::now() + LOCK_WAIT;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(file),
                Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(format!(
                        "another earshot held the lock on {}'s tokens for over {}s (a stopped process?); try again",
                        key.server,
                        LOCK_WAIT.as_secs()
                    ));
                }
                Err(std::fs::TryLockError::Error(error)) => {
                    return Err(format!("could not lock {}: {error}", path.display()));
                }
            }
        }
    }

    /// Runs `work` on the record of `key` under its lock, off the async threads.
    ///
    /// # Errors
    /// The lock or `work`'s own error.
    pub async fn locked<T: Send + 'static>(
        &self,
        key: &TokenKey,
        work: impl FnOnce(&TokenStore, &TokenKey) -> Result<T, String> + Send + 'static,
    ) -> Result<T, String> {
        self.off_thread(key, |store, key| {
            let _lock = store.lock(key)?;
            work(store, key)
        })
        .await
    }

    /// `key`'s record, read off the async threads (no lock: writes are atomic renames).
    ///
    /// # Errors
    /// As [`TokenStore::read`].
    pub async fn read_async(&self, key: &TokenKey) -> Result<Option<TokenRecord>, String> {
        self.off_thread(key, |store, key| store.read(key)).await
    }

    /// Runs `work` (file I/O, a lock wait) on the blocking pool, never on an async thread.
    async fn off_thread<T: Send + 'static>(
        &self,
        key: &TokenKey,
        work: impl FnOnce(&TokenStore, &TokenKey) -> Result<T, String> + Send + 'static,
    ) -> Result<T, String> {
        let store = self.clone();
        let key = key.clone();
        tokio::task::spawn_blocking(move || work(&store, &key))
            .await
            .map_err(|error| error.to_string())?
    }

    fn create_dir(&self) -> Result<(), String> {
        std::fs::create_dir_all(&self.dir)
            .and_then(|()| restrict(&self.dir, 0o700))
            .map_err(|error| format!("could not create {}: {error}", self.dir.display()))
    }

    /// The credential store rmcp's authorization manager reads and writes for `key`.
    pub fn credentials_for(&self, key: &TokenKey) -> FileCredentials {
        FileCredentials {
            store: Arc::new(self.clone()),
            key: key.clone(),
            last_read: Arc::new(parking_lot::Mutex::new(None)),
        }
    }
}

#[cfg(unix)]
fn restrict(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn restrict(_path: &Path, _mode: u32) -> std::io::Result<()> {
    Ok(())
}

/// rmcp's view of one key's record: it loads and saves the credentials part, every other field
/// is kept as it is. rmcp loads before every request: the credentials last read are kept with
/// the file's identity (inode, size, modification time), and the file is read again only when
/// that changed (a write is a rename, so every write changes the inode).
#[derive(Clone)]
pub struct FileCredentials {
    store: Arc<TokenStore>,
    key: TokenKey,
    last_read: Arc<parking_lot::Mutex<Option<LastRead>>>,
}

/// The credentials last read, with the identity of the file they were read from.
type LastRead = (FileStamp, Option<StoredCredentials>);

/// What tells one version of a token file from another without reading it.
#[derive(Clone, PartialEq, Eq)]
struct FileStamp {
    inode: u64,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl FileStamp {
    fn of(path: &Path) -> std::io::Result<FileStamp> {
        let metadata = std::fs::metadata(path)?;
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&metadata);
        #[cfg(not(unix))]
        let inode = 0;
        Ok(FileStamp {
            inode,
            len: metadata.len(),
            modified: metadata.modified().ok(),
        })
    }
}

fn store_error(error: String) -> AuthError {
    AuthError::CredentialStoreError(error)
}

impl FileCredentials {
    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&TokenStore, &TokenKey) -> Result<T, String> + Send + 'static,
    ) -> Result<T, AuthError> {
        self.store
            .off_thread(&self.key, work)
            .await
            .map_err(store_error)
    }
}

#[async_trait::async_trait]
impl CredentialStore for FileCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let path = self.store.path_of(&self.key);
        // One stat (microseconds, no read) decides whether the file changed since it was read.
        let stamp = match FileStamp::of(&path) {
            Ok(stamp) => stamp,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => {
                return Err(store_error(format!(
                    "could not read {}: {error}",
                    path.display()
                )));
            }
        };
        if let Some((seen, credentials)) = &*self.last_read.lock()
            && *seen == stamp
        {
            return Ok(credentials.clone());
        }
        let (stamp, credentials) = self
            .blocking(|store, key| {
                // The stamp taken before the read: a write in between makes the next load read again.
                let stamp = FileStamp::of(&store.path_of(key)).ok();
                let credentials = store.read(key)?.and_then(|record| record.credentials);
                Ok((stamp, credentials))
            })
            .await?;
        if let Some(stamp) = stamp {
            *self.last_read.lock() = Some((stamp, credentials.clone()));
        }
        Ok(credentials)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.blocking(move |store, key| match store.read(key)? {
            Some(mut record) => {
                record.credentials = Some(credentials);
                store.write(&record)
            }
            // Logged out meanwhile: a refresh must not bring the tokens back.
            None => Ok(()),
        })
        .await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.blocking(|store, key| match store.read(key)? {
            Some(mut record) => {
                record.credentials = None;
                store.write(&record)
            }
            None => Ok(()),
        })
        .await
    }

    /// The authorization server refused the refresh token: the tokens are dropped (the server
    /// needs a new login), unless another process has stored new ones meanwhile.
    async fn on_refresh_token_rejected(
        &self,
        rejected: &StoredCredentials,
    ) -> Result<(), AuthError> {
        let rejected_token = refresh_token_of(rejected);
        self.blocking(move |store, key| match store.read(key)? {
            Some(mut record)
                if record.credentials.as_ref().map(refresh_token_of) == Some(rejected_token) =>
            {
                record.credentials = None;
                store.write(&record)
            }
            _ => Ok(()),
        })
        .await
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let file = self.blocking(|store, key| store.lock(key)).await?;
        // The refresh that follows reads the file itself, never the last read: a refresh token
        // must be the one stored now, whatever a coarse clock or a reused inode would say.
        *self.last_read.lock() = None;
        Ok(Some(CredentialRefreshGuard::new(file)))
    }
}

fn refresh_token_of(credentials: &StoredCredentials) -> Option<String> {
    use oauth2::TokenResponse;
    credentials
        .token_response
        .as_ref()
        .and_then(|response| response.refresh_token())
        .map(|token| token.secret().clone())
}
