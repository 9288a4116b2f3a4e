// The model manager (Model menu > Model manager..., and the model bar's
// button): the catalog's models, installed or not, and the other GGUF files,
// with Install (progress bar, speed, time left, Cancel), Delete (confirmed)
// and Load. The download runs off the UI thread (ModelInstallJob).
#pragma once

#include <QDialog>

#include "models/catalog.h"

class QLabel;
class QProgressBar;
class QPushButton;
class QTableView;

namespace hearth::models::install {
struct InstallProgress;
}

namespace hearth::app {

class ModelInstallJob;
class ModelListModel;

class ModelManagerDialog : public QDialog {
  Q_OBJECT

 public:
  explicit ModelManagerDialog(models::Catalog catalog, QWidget* parent = nullptr);

  ModelListModel* listModel() const { return model_; }
  QTableView* table() const { return table_; }
  // The model the engine has open: it is not deleted from under it, and one opened
  // from outside the models folder is listed.
  void setLoadedPath(const QString& path);

 public slots:
  void refresh();

 signals:
  void loadRequested(const QString& path);
  void modelsChanged();  // a model was installed or deleted

 private:
  int currentRow() const;
  void updateButtons();
  void install();
  void confirmDelete();
  void remove(const QString& file_name);  // in the models folder
  void showProgress(const models::install::InstallProgress& p);
  void installFinished(const QString& name, bool ok, const QString& path, const QString& message);

  ModelListModel* model_ = nullptr;
  ModelInstallJob* job_ = nullptr;
  QTableView* table_ = nullptr;
  QPushButton* install_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QPushButton* delete_ = nullptr;
  QPushButton* load_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* status_ = nullptr;
  QString loaded_path_;
};

}  // namespace hearth::app
